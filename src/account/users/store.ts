import { sql, type Kysely, type Transaction, type Selectable, type Insertable } from 'kysely';
import { insertedId } from '../../kit/db/index.js';
import { prepared } from '../../kit/db/prepared.js';
import type { AccountDB, UsersTable } from '../db.js';

export type UserRow = Selectable<UsersTable>;
export interface UserSearch {
  keyword?: string;
  group?: string;
  role?: number;
  status?: number;
}
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

  /** Id and username of the users among `ids` (deleted ones too: their usage rows still name them). */
  usernames(db: Db, ids: number[]) {
    return db.selectFrom('users').select(['id', 'username']).where('id', 'in', ids).execute();
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

  /** Sets a new password hash and bumps auth_version (every session dies). */
  async replacePassword(db: Db, id: number, hash: string) {
    await db
      .updateTable('users')
      .set((eb) => ({ password_hash: hash, auth_version: eb('auth_version', '+', 1) }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .execute();
  },

  async setGroup(db: Db, id: number, group: string) {
    await db.updateTable('users').set({ group }).where('id', '=', id).where('deleted_at', 'is', null).execute();
  },

  /** Marks a live user deleted and bumps auth_version; false when it was not live. */
  async softDelete(db: Db, id: number, at: number): Promise<boolean> {
    const r = await db
      .updateTable('users')
      .set((eb) => ({ deleted_at: at, auth_version: eb('auth_version', '+', 1) }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  },

  /** Locks the user row until the transaction ends (no-op on SQLite, where writers are serialized). */
  async lock(trx: Transaction<AccountDB>, id: number, dialect: string) {
    if (dialect === 'sqlite') return;
    await trx.selectFrom('users').select('id').where('id', '=', id).forUpdate().execute();
  },

  /**
   * A page of live users, newest first, for the admin list (AS05/AS06): `keyword` matches the id exactly
   * (when numeric) or a part of the username, email or display name, ignoring case; filters are exact.
   */
  async search(db: Db, q: UserSearch, offset: number, limit: number): Promise<{ rows: UserRow[]; total: number }> {
    let base = db.selectFrom('users').where('deleted_at', 'is', null);
    const kw = q.keyword?.trim().toLowerCase();
    if (kw) {
      const like = `%${kw.replace(/[!%_]/g, (c) => '!' + c)}%`; // '!' escapes: a backslash means different things per dialect
      const id = /^\d{1,15}$/.test(kw) ? Number(kw) : null;
      base = base.where((eb) =>
        eb.or([
          ...(id ? [eb('id', '=', id)] : []),
          ...(['username', 'email', 'display_name'] as const).map((c) => eb(sql`lower(${sql.ref(c)})`, 'like', sql`${like} escape '!'`)),
        ]),
      );
    }
    if (q.group) base = base.where('group', '=', q.group);
    if (q.role !== undefined) base = base.where('role', '=', q.role);
    if (q.status !== undefined) base = base.where('status', '=', q.status);
    const counted = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await base.selectAll().orderBy('id', 'desc').offset(offset).limit(limit).execute();
    return { rows, total: Number(counted.n) };
  },

  /** The groups of the users that are not deleted, sorted. */
  async groups(db: Db): Promise<string[]> {
    const rows = await db.selectFrom('users').select('group').distinct().where('deleted_at', 'is', null).orderBy('group').execute();
    return rows.map((r) => r.group);
  },

  async count(db: Db) {
    const r = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(r.n);
  },
};
