import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import { changedKeys } from '../../kit/db/index.js';
import { prepared } from '../../kit/db/prepared.js';
import type { AccountDB, UserSessionsTable } from '../db.js';

export type SessionRow = Selectable<UserSessionsTable>;
type Db = Kysely<AccountDB> | Transaction<AccountDB>;

/** At most this many sessions are listed (the reference's limit). */
export const SESSION_LIST_LIMIT = 100;

// The queries of every authenticated request and every login or refresh, compiled once (see prepared()).
const bySid = prepared((db: Db, sid: string) => db.selectFrom('user_sessions').selectAll().where('sid', '=', sid));

const countActive = prepared((db: Db, userId: number, now: number) =>
  db
    .selectFrom('user_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('expires_at', '>', now),
);

const countIssuedSince = prepared((db: Db, userId: number, since: number) =>
  db
    .selectFrom('user_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('created_at', '>', since),
);

const rotate = prepared((db: Db, sid: string, expected: string, next: string, previousValidUntil: number, recentRotations: string, now: number) =>
  db
    .updateTable('user_sessions')
    .set({ refresh_hash: next, previous_refresh_hash: expected, previous_valid_until: previousValidUntil, recent_rotations: recentRotations, last_active_at: now })
    .where('sid', '=', sid)
    .where('status', '=', 'active')
    .where('refresh_hash', '=', expected),
);

const listVisible = prepared((db: Db, userId: number, authVersion: number, now: number) =>
  db
    .selectFrom('user_sessions')
    .select(['sid', 'login_method', 'ip', 'user_agent', 'created_at', 'last_active_at', 'expires_at'])
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('expires_at', '>', now)
    .where('user_auth_version', '=', authVersion)
    .orderBy('last_active_at', 'desc')
    .orderBy('created_at', 'desc')
    // A literal: SQLite runs this query ~3× slower with a bound LIMIT (~13 µs against ~4 µs).
    .limit(sql.lit(SESSION_LIST_LIMIT)),
);

/** SQL for login sessions. */
export const sessionsStore = {
  async bySid(db: Db, sid: string): Promise<SessionRow | undefined> {
    return (await bySid(db, sid)).rows[0];
  },

  async lockBySid(trx: Transaction<AccountDB>, sid: string, dialect: string) {
    const q = trx.selectFrom('user_sessions').selectAll().where('sid', '=', sid);
    return (dialect === 'sqlite' ? q : q.forUpdate()).executeTakeFirst();
  },

  async countActive(db: Db, userId: number, now: number): Promise<number> {
    return Number((await countActive(db, userId, now)).rows[0].n);
  },

  async countIssuedSince(db: Db, userId: number, since: number): Promise<number> {
    return Number((await countIssuedSince(db, userId, since)).rows[0].n);
  },

  /** Active sessions, least recently active first. */
  oldestActive(db: Db, userId: number, now: number, limit: number) {
    return db
      .selectFrom('user_sessions')
      .select(['sid'])
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .where('expires_at', '>', now)
      .orderBy('last_active_at', 'asc')
      .orderBy('created_at', 'asc')
      .limit(limit)
      .execute();
  },

  async insert(db: Db, row: Insertable<UserSessionsTable>) {
    await db.insertInto('user_sessions').values(row).execute();
  },

  /** Rotates only if the stored hash is still `expected` (compare-and-swap); true when it did. */
  async rotate(db: Db, sid: string, expected: string, next: string, previousValidUntil: number, recentRotations: string, now: number) {
    const r = await rotate(db, sid, expected, next, previousValidUntil, recentRotations, now);
    return Number(r.numAffectedRows) === 1;
  },

  /** Revokes the given active sessions; returns the sids actually revoked. */
  async revoke(db: Db, sids: string[], reason: string, now: number): Promise<string[]> {
    if (sids.length === 0) return [];
    const set = { status: 'revoked', revoked_at: now, revoked_reason: reason };
    return changedKeys<string>(db, 'user_sessions', 'sid', (q) => q.where('sid', 'in', sids).where('status', '=', 'active'), set);
  },

  /** Revokes every active session of a user except `keepSid`; returns the sids revoked. */
  async revokeAllOf(db: Db, userId: number, keepSid: string | null, reason: string, now: number): Promise<string[]> {
    const set = { status: 'revoked', revoked_at: now, revoked_reason: reason };
    return changedKeys<string>(db, 'user_sessions', 'sid', (q) => {
      const mine = q.where('user_id', '=', userId).where('status', '=', 'active');
      return keepSid ? mine.where('sid', '!=', keepSid) : mine;
    }, set);
  },

  /** Revokes every active session of every user; returns their sids. */
  async revokeEveryone(db: Db, reason: string, now: number): Promise<string[]> {
    return changedKeys<string>(db, 'user_sessions', 'sid', (q) => q.where('status', '=', 'active'), { status: 'revoked', revoked_at: now, revoked_reason: reason });
  },

  /** Visible sessions of a user: active, unexpired, of the current auth version. */
  async listVisible(db: Db, userId: number, authVersion: number, now: number) {
    return (await listVisible(db, userId, authVersion, now)).rows;
  },

  /** The newest sign-in still stored (sessions are purged some time after they end) per user among these. */
  async lastLoginOf(db: Db, userIds: number[]): Promise<Map<number, number>> {
    if (userIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('user_sessions')
      .select((eb) => ['user_id', eb.fn.max('created_at').as('at')])
      .where('user_id', 'in', userIds)
      .groupBy('user_id')
      .execute();
    return new Map(rows.map((r) => [Number(r.user_id), Number(r.at)]));
  },

  /** Deletes revoked and expired rows older than `before`. */
  async purge(db: Db, before: number) {
    await db
      .deleteFrom('user_sessions')
      .where((eb) => eb.or([eb('expires_at', '<', before), eb.and([eb('status', '=', 'revoked'), eb('revoked_at', '<', before)])]))
      .execute();
  },
};
