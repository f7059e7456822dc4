import { sql, type Expression, type SqlBool } from 'kysely';
import { dialectOf, locksRows } from '../../../kit/db/index.js';
import { AppError } from '../../../kit/http/errors.js';
import { prepared } from '../../../kit/db/prepared.js';
import { combined } from '../../../kit/db/combined.js';
import type { EdgeTokenTable } from '../../db.js';
import { changeKeys, type Db } from '../../keys/store.js';

export type TokenRow = EdgeTokenTable;
export type NewToken = Omit<EdgeTokenTable, 'id' | 'used_quota' | 'accessed_time' | 'deleted_at'>;
export type TokenFields = Pick<EdgeTokenTable, 'name' | 'expired_time' | 'remain_quota' | 'unlimited_quota' | 'model_limits_enabled' | 'model_limits' | 'allow_ips' | 'group_name'>;

// ---- a call's hold and settlement (runs/reserve.ts, runs/settle.ts) ----

// A token's call runs these (see prepared()).
const quotaRow = prepared((db: Db, id: number) => db.selectFrom('edge_tokens').select(['remain_quota', 'unlimited_quota']).where('id', '=', id));
const lockedQuotaRow = prepared((db: Db, id: number) => db.selectFrom('edge_tokens').select(['remain_quota', 'unlimited_quota']).where('id', '=', id).forUpdate());
const takeHold = prepared((db: Db, id: number, amount: number) => db.updateTable('edge_tokens').set((eb) => ({ remain_quota: eb('remain_quota', '-', amount) })).where('id', '=', id));
const takeLimitedHold = prepared((db: Db, id: number, amount: number) =>
  db.updateTable('edge_tokens').set((eb) => ({ remain_quota: eb('remain_quota', '-', amount) })).where('id', '=', id).where('remain_quota', '>=', amount),
);
const settleRow = prepared((db: Db, id: number, released: number, charged: number, now: number) =>
  db.updateTable('edge_tokens').set((eb) => ({ remain_quota: eb('remain_quota', '+', released), used_quota: eb('used_quota', '+', charged), accessed_time: now })).where('id', '=', id),
);

type QuotaRow = { remain_quota: number | null; unlimited_quota: number | null };

// PostgreSQL: the tokens of the pieces of a ledger batch that start together, locked by one statement (each
// found by its key, lateral: see wallets/store.ts for why not as a set).
const lockedQuotaRows = prepared((db: Db, ids: number[]) => ({
  compile: () =>
    sql<QuotaRow>`select l.remain_quota, l.unlimited_quota from unnest(${ids}::bigint[]) with ordinality as x(id, i)
      left join lateral (select remain_quota, unlimited_quota from edge_tokens where edge_tokens.id = x.id for update) l on true order by x.i`.compile(db),
}));
const lockedQuotasTogether = combined(async (trx: Db, ids: number[]): Promise<QuotaRow[]> => (await lockedQuotaRows(trx, ids)).rows, (id) => id);

/**
 * The token's quota, its row locked until the transaction ends (SQLite: its one writer is already alone); on
 * PostgreSQL in one statement with the other pieces of a ledger batch that start together.
 */
export async function lockedTokenQuota(trx: Db, id: number) {
  const dialect = dialectOf(trx);
  const r = dialect === 'postgres' ? await lockedQuotasTogether(trx, id) : (await (locksRows(dialect) ? lockedQuotaRow : quotaRow)(trx, id)).rows[0];
  return r && r.remain_quota !== null ? { remain: Number(r.remain_quota), unlimited: Number(r.unlimited_quota) === 1 } : null;
}

/**
 * Takes a call's hold off the token's remain_quota (as new-api, an unlimited token's too: it is only not
 * checked), on a limited token only while it has that much left: token_quota_exhausted otherwise.
 */
export async function holdFromToken(trx: Db, id: number, amount: number, unlimited: boolean) {
  const r = await (unlimited ? takeHold : takeLimitedHold)(trx, id, amount);
  if (r.numAffectedRows !== 1n) throw tokenExhausted(amount);
}

/** A limited token that no longer has `amount` left for a call's hold. */
export function tokenExhausted(amount: number) {
  return new AppError('token_quota_exhausted', { params: { remaining: 0, amount } });
}

/** A settled call of the token: the unspent hold back to remain_quota, the charge to used_quota, the call's time. */
export async function settleOnToken(trx: Db, id: number, reserved: number, charged: number, nowSeconds: number) {
  await settleRow(trx, id, reserved - charged, charged, nowSeconds);
}

// ---- the customer's reads and changes (customers/tokens/service.ts) ----

/** Inserts a token and answers its id (read back by its unique key id: MySQL has no RETURNING). */
export async function insertToken(trx: Db, row: NewToken): Promise<number> {
  await trx.insertInto('edge_tokens').values({ ...row, used_quota: 0, accessed_time: 0, deleted_at: null } as never).execute();
  const r = await trx.selectFrom('edge_tokens').select('id').where('key_id', '=', row.key_id).executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function countTokens(db: Db, ownerId: number): Promise<number> {
  const r = await db.selectFrom('edge_tokens').select((eb) => eb.fn.countAll<number>().as('n')).where('owner_id', '=', ownerId).where('deleted_at', 'is', null).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The owner's live token of this id (another owner's, or a deleted one: undefined); `lock` holds it until the transaction ends. */
export async function tokenOf(db: Db, ownerId: number, id: number, lock = false) {
  let q = db.selectFrom('edge_tokens').selectAll().where('id', '=', id).where('owner_id', '=', ownerId).where('deleted_at', 'is', null);
  if (lock && locksRows(dialectOf(db))) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** The owner's live tokens of these ids. */
export async function tokensOf(db: Db, ownerId: number, ids: number[], lock = false) {
  if (ids.length === 0) return [];
  let q = db.selectFrom('edge_tokens').selectAll().where('id', 'in', ids).where('owner_id', '=', ownerId).where('deleted_at', 'is', null);
  if (lock && locksRows(dialectOf(db))) q = q.forUpdate();
  return q.execute();
}

export interface TokenFilter {
  /** A substring of the name. */
  name?: string;
  /** One key id (a full key searched for). */
  keyId?: string;
  /** The masked key exactly. */
  hint?: string;
  /** A substring of the masked key. */
  hintPart?: string;
}

/** `%text%` for LIKE with `!` as the escape character (as new-api: the same on SQLite, PostgreSQL and MySQL). */
function containing(column: string, text: string): Expression<SqlBool> {
  const escaped = text.replace(/[!%_]/g, (c) => `!${c}`);
  return sql<SqlBool>`${sql.ref(column)} like ${`%${escaped}%`} escape '!'`;
}

/** The owner's live tokens matching `f`, newest first, and how many match. */
export async function findTokens(db: Db, ownerId: number, f: TokenFilter, offset: number, limit: number) {
  let q = db.selectFrom('edge_tokens').where('owner_id', '=', ownerId).where('deleted_at', 'is', null);
  if (f.name !== undefined) q = q.where(containing('name', f.name));
  if (f.keyId !== undefined) q = q.where('key_id', '=', f.keyId);
  if (f.hint !== undefined) q = q.where('key_hint', '=', f.hint);
  if (f.hintPart !== undefined) q = q.where(containing('key_hint', f.hintPart));
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('id', 'desc').offset(offset).limit(limit).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

// A token's fields, status and deletion are in its key's row (keys/store.ts): each change goes through changeKeys.

export async function updateTokenFields(trx: Db, ownerId: number, id: number, fields: TokenFields) {
  await changeKeys(trx, (t) => t.updateTable('edge_tokens').set(fields).where('id', '=', id).where('owner_id', '=', ownerId).where('deleted_at', 'is', null).execute());
}

export async function setTokenStatus(trx: Db, ownerId: number, id: number, status: number) {
  await changeKeys(trx, (t) => t.updateTable('edge_tokens').set({ status }).where('id', '=', id).where('owner_id', '=', ownerId).where('deleted_at', 'is', null).execute());
}

/** Marks the tokens deleted (their pending keys dropped); the caller revokes their keys in the same transaction. */
export async function markDeleted(trx: Db, ownerId: number, ids: number[], now: number) {
  if (ids.length === 0) return;
  await changeKeys(trx, (t) =>
    t.updateTable('edge_tokens').set({ deleted_at: now, pending_key: null, pending_until: null }).where('id', 'in', ids).where('owner_id', '=', ownerId).where('deleted_at', 'is', null).execute(),
  );
}

/** Clears a pending key, once: false when it was taken already (a concurrent reveal). */
export async function takePendingKey(trx: Db, id: number): Promise<boolean> {
  const r = await trx.updateTable('edge_tokens').set({ pending_key: null, pending_until: null }).where('id', '=', id).where('pending_key', 'is not', null).executeTakeFirst();
  return r.numUpdatedRows === 1n;
}

/** Drops the owner's keys whose showing time has passed: past it, a key is kept only hashed. */
export async function dropLatePendingKeys(db: Db, ownerId: number, now: number) {
  await db.updateTable('edge_tokens').set({ pending_key: null, pending_until: null }).where('owner_id', '=', ownerId).where('pending_until', '<', now).execute();
}
