import type { Kysely, Selectable, Transaction } from 'kysely';
import type { UsersTable } from '../db.js';
import type { AccountContext } from '../context.js';

/** Provider identity columns added to users by migration 0200. */
export interface BindingColumns {
  github_id: string | null;
  discord_id: string | null;
  oidc_id: string | null;
  linux_do_id: string | null;
  wechat_id: string | null;
  telegram_id: string | null;
}
export type BindingColumn = keyof BindingColumns;

export interface OAuthBindingsTable {
  user_id: number;
  provider_slug: string;
  provider_user_id: string;
  created_at: number;
}

export interface EmailCodesTable {
  purpose: string;
  email: string;
  code_hash: string;
  attempts: number;
  created_at: number;
  expires_at: number;
}

export interface TelegramAssertionsTable {
  hash: string;
  expires_at: number;
}

/** The account tables this area reads and writes. */
export interface BindingDB {
  users: UsersTable & BindingColumns;
  user_oauth_bindings: OAuthBindingsTable;
  email_codes: EmailCodesTable;
  telegram_assertions: TelegramAssertionsTable;
}
export type BindingUserRow = Selectable<BindingDB['users']>;
export type BDb = Kysely<BindingDB> | Transaction<BindingDB>;

export function bindingDb(ctx: AccountContext): Kysely<BindingDB> {
  return ctx.database.db as unknown as Kysely<BindingDB>;
}

/** SQL for provider identities: the users binding columns and user_oauth_bindings. */
export const bindingsStore = {
  userById(db: BDb, id: number) {
    return db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  },

  /** The user holding an identity in a column, deleted users included (callers decide). */
  userByColumn(db: BDb, column: BindingColumn, value: string) {
    return db.selectFrom('users').selectAll().where(column, '=', value).executeTakeFirst();
  },

  async userByCustom(db: BDb, slug: string, providerUserId: string) {
    const b = await db
      .selectFrom('user_oauth_bindings')
      .select('user_id')
      .where('provider_slug', '=', slug)
      .where('provider_user_id', '=', providerUserId)
      .executeTakeFirst();
    return b ? db.selectFrom('users').selectAll().where('id', '=', Number(b.user_id)).executeTakeFirst() : undefined;
  },

  customOf(db: BDb, userId: number) {
    return db.selectFrom('user_oauth_bindings').selectAll().where('user_id', '=', userId).orderBy('provider_slug').execute();
  },

  async setColumn(db: BDb, userId: number, column: BindingColumn, value: string | null) {
    const r = await db.updateTable('users').set({ [column]: value }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows);
  },

  async setCustom(db: BDb, userId: number, slug: string, providerUserId: string, now: number) {
    await db.deleteFrom('user_oauth_bindings').where('user_id', '=', userId).where('provider_slug', '=', slug).execute();
    await db.insertInto('user_oauth_bindings').values({ user_id: userId, provider_slug: slug, provider_user_id: providerUserId, created_at: now }).execute();
  },

  async deleteCustom(db: BDb, userId: number, slug: string) {
    const r = await db.deleteFrom('user_oauth_bindings').where('user_id', '=', userId).where('provider_slug', '=', slug).executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  async setEmail(db: BDb, userId: number, email: string | null) {
    await db.updateTable('users').set({ email }).where('id', '=', userId).execute();
  },

  async maxUserId(db: BDb) {
    const r = await db.selectFrom('users').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
    return Number(r?.m ?? 0);
  },
};
