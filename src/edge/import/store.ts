import { insertedId } from '../../kit/db/index.js';
import type { EdgeRedemptionTable, EdgeTokenTable } from '../db.js';
import { changeKeys, type Db } from '../keys/store.js';
import { insertRun, type NewRun } from '../runs/store.js';

/** The edge rows an import writes directly (its own batch transactions; the services' rules are in the steps). */

export async function insertToken(db: Db, row: Omit<EdgeTokenTable, 'id'>): Promise<number> {
  return insertedId(db, db.insertInto('edge_tokens').values(row as never));
}

export async function tokenById(db: Db, id: number) {
  return db.selectFrom('edge_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Changes an imported token (its key's row: keys/store.ts changeKeys). */
export async function updateToken(db: Db, id: number, patch: Partial<EdgeTokenTable>) {
  await changeKeys(db, (trx) => trx.updateTable('edge_tokens').set(patch).where('id', '=', id).execute());
}

export async function keyExists(db: Db, keyId: string): Promise<boolean> {
  const inKeys = await db.selectFrom('edge_keys').select('key_id').where('key_id', '=', keyId).executeTakeFirst();
  const inTokens = await db.selectFrom('edge_tokens').select('id').where('key_id', '=', keyId).executeTakeFirst();
  return !!inKeys || !!inTokens;
}

export async function insertRedemption(db: Db, row: Omit<EdgeRedemptionTable, 'id'>): Promise<number> {
  return insertedId(db, db.insertInto('edge_redemptions').values(row as never));
}

export async function redemptionById(db: Db, id: number) {
  return db.selectFrom('edge_redemptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function redemptionByHash(db: Db, keyHash: string) {
  return db.selectFrom('edge_redemptions').select('id').where('key_hash', '=', keyHash).executeTakeFirst();
}

/** Changes a code only while it is unused here (status 1): a code redeemed on the edge stays as it is. */
export async function updateUnusedRedemption(db: Db, id: number, patch: Partial<EdgeRedemptionTable>): Promise<boolean> {
  const r = await db.updateTable('edge_redemptions').set(patch).where('id', '=', id).where('status', '=', 1).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Adds imported usage counters to a wallet (which exists: the caller credited it first). */
export async function addWalletUsage(db: Db, ownerId: number, usedQuota: number, requestCount: number) {
  await db
    .updateTable('edge_wallets')
    .set((eb) => ({ used_quota: eb('used_quota', '+', usedQuota), request_count: eb('request_count', '+', requestCount) }))
    .where('owner_id', '=', ownerId)
    .execute();
}

/** A credit row of a given kind and time (wallet/store's insertCredit writes the CLI's and console's, at now). */
export async function insertCreditRow(db: Db, row: { credit_id: string; owner_id: number; amount: number; wallet: string; created_at: number; kind: string; reason: string }) {
  await db.insertInto('edge_credits').values(row).execute();
}

/**
 * The wallet as the customer port answers it (CustomerBalance, JSON), which an account user's credit rows
 * keep in `wallet`.
 */
export async function balanceJson(db: Db, ownerId: number): Promise<string> {
  const w = await db.selectFrom('edge_wallets').select(['balance', 'reserved', 'used_quota', 'request_count']).where('owner_id', '=', ownerId).executeTakeFirst();
  const n = (v: unknown) => Number(v ?? 0);
  return JSON.stringify({ quota: n(w?.balance) - n(w?.reserved), used_quota: n(w?.used_quota), request_count: n(w?.request_count) });
}

export async function creditExists(db: Db, creditId: string): Promise<boolean> {
  return !!(await db.selectFrom('edge_credits').select('credit_id').where('credit_id', '=', creditId).executeTakeFirst());
}

/** An ended run as a usage row (no reservation, no settlement: the money moved in the other system). */
export async function insertEndedRun(db: Db, run: NewRun) {
  await insertRun(db, run);
}

/** The edge token id and key id of imported tokens, by their edge token id. */
export async function tokenKeys(db: Db, ids: number[]) {
  if (ids.length === 0) return new Map<number, string>();
  const rows = await db.selectFrom('edge_tokens').select(['id', 'key_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r.key_id]));
}
