import type { Kysely, Transaction, Selectable, Insertable } from 'kysely';
import { insertedId } from '../../kit/db/index.js';
import { prepared } from '../../kit/db/prepared.js';
import type { AccountDB, UsersTable } from '../db.js';

export type UserRow = Selectable<UsersTable>;
type Db = Kysely<AccountDB> | Transaction<AccountDB>;

// Read on every login and every authentication whose cached user state expired (see prepared()).
const byId = prepared((db: Db, id: number) => db.selectFrom('users').selectAll().where('id', '=', id).where('deleted_at', 'is', null));

const byLoginName = prepared((db: Db, name: string) =>
  db
    .selectFrom('users')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('username', '=', name), eb('email', '=', name)]))
    .orderBy('id'),
);

/** SQL for the users table. */
export const usersStore = {
  async byId(db: Db, id: number): Promise<UserRow | undefined> {
    return (await byId(db, id)).rows[0];
  },

  byUsername(db: Db, username: string) {
    return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  },

  /** A live user whose username or email equals the login name. */
  async byLoginName(db: Db, name: string): Promise<UserRow | undefined> {
    return (await byLoginName(db, name)).rows[0];
  },

  byEmail(db: Db, email: string) {
    return db.selectFrom('users').select(['id']).where('email', '=', email).executeTakeFirst();
  },

  byAffCode(db: Db, code: string) {
    return db.selectFrom('users').select(['id']).where('aff_code', '=', code).where('deleted_at', 'is', null).executeTakeFirst();
  },

  byAccessTokenHash(db: Db, hash: string) {
    return db.selectFrom('users').selectAll().where('access_token_hash', '=', hash).where('deleted_at', 'is', null).executeTakeFirst();
  },

  async insert(db: Db, row: Insertable<UsersTable>): Promise<number> {
    return insertedId(db, db.insertInto('users').values(row));
  },

  async setPasswordHash(db: Db, id: number, hash: string) {
    await db.updateTable('users').set({ password_hash: hash }).where('id', '=', id).execute();
  },

  async setDisplayName(db: Db, id: number, displayName: string) {
    await db.updateTable('users').set({ display_name: displayName }).where('id', '=', id).execute();
  },

  async setAccessTokenHash(db: Db, id: number, hash: string | null) {
    await db.updateTable('users').set({ access_token_hash: hash }).where('id', '=', id).execute();
  },

  /** Changes role or status and bumps auth_version, so existing sessions die. */
  async updateSecurity(db: Db, id: number, patch: { role?: number; status?: number }) {
    await db
      .updateTable('users')
      .set((eb) => ({ ...patch, auth_version: eb('auth_version', '+', 1) }))
      .where('id', '=', id)
      .execute();
  },

  /** Locks the user row until the transaction ends (no-op on SQLite, where writers are serialized). */
  async lock(trx: Transaction<AccountDB>, id: number, dialect: string) {
    if (dialect === 'sqlite') return;
    await trx.selectFrom('users').select('id').where('id', '=', id).forUpdate().execute();
  },

  async count(db: Db) {
    const r = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  },
};
