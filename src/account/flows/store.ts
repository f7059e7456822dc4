import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import { updateReturning } from '../../kit/db/index.js';
import type { AccountDB, AuthFlowsTable } from '../db.js';

export type FlowRow = Selectable<AuthFlowsTable>;
type Db = Kysely<AccountDB> | Transaction<AccountDB>;

/** SQL for auth_flows. */
export const flowsStore = {
  async insert(db: Db, row: Insertable<AuthFlowsTable>) {
    await db.insertInto('auth_flows').values(row).execute();
  },

  byHash(db: Db, hash: string) {
    return db.selectFrom('auth_flows').selectAll().where('token_hash', '=', hash).executeTakeFirst();
  },

  /** Marks the flow consumed if it still is unconsumed and unexpired; true when this call won. */
  async consume(db: Db, hash: string, purpose: string, now: number) {
    const r = await db
      .updateTable('auth_flows')
      .set({ consumed_at: now })
      .where('token_hash', '=', hash)
      .where('purpose', '=', purpose)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  },

  /** The hash of the newest unconsumed, unexpired flow of this purpose, user and session. */
  async latestLive(db: Db, purpose: string, userId: number, sessionId: string, now: number): Promise<string | undefined> {
    const row = await db
      .selectFrom('auth_flows')
      .select('token_hash')
      .where('purpose', '=', purpose)
      .where('user_id', '=', userId)
      .where('session_id', '=', sessionId)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .orderBy('created_at', 'desc')
      .orderBy('token_hash')
      .limit(1)
      .executeTakeFirst();
    return row?.token_hash;
  },

  /** Marks every live flow of this purpose, user and session consumed. */
  async endLive(db: Db, purpose: string, userId: number, sessionId: string, now: number) {
    await db
      .updateTable('auth_flows')
      .set({ consumed_at: now })
      .where('purpose', '=', purpose)
      .where('user_id', '=', userId)
      .where('session_id', '=', sessionId)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .execute();
  },

  /** Adds one failed attempt and returns the new count. */
  async addAttempt(db: Db, hash: string): Promise<number> {
    const row = await updateReturning<{ attempts: number }>(db, 'auth_flows', (q) => q.where('token_hash', '=', hash), (eb) => ({ attempts: eb('attempts', '+', 1) }), ['attempts']);
    return row?.attempts ?? 0;
  },

  async updatePayload(db: Db, hash: string, payload: string) {
    await db.updateTable('auth_flows').set({ payload }).where('token_hash', '=', hash).execute();
  },

  async purge(db: Db, before: number) {
    await db.deleteFrom('auth_flows').where('expires_at', '<', before).execute();
  },
};
