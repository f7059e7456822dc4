import crypto from 'node:crypto';
import { sql } from 'kysely';
import { dialectOf, locksRows } from '../../kit/db/index.js';
import type { Db } from '../keys/store.js';
import { nowSeconds } from '../db.js';
import { prepared } from '../../kit/db/prepared.js';
import { combined } from '../../kit/db/combined.js';
import { holdFromToken, tokenExhausted } from '../customers/tokens/store.js';

// Every reservation runs these (see prepared()).
const walletRow = prepared((db: Db, ownerId: number) => db.selectFrom('edge_wallets').selectAll().where('owner_id', '=', ownerId));
const lockedWalletRow = prepared((db: Db, ownerId: number) => db.selectFrom('edge_wallets').selectAll().where('owner_id', '=', ownerId).forUpdate());
const reserveWhenAvailable = prepared((db: Db, ownerId: number, amount: number, now: number) =>
  db
    .updateTable('edge_wallets')
    .set((eb) => ({ reserved: eb('reserved', '+', amount), revision: eb('revision', '+', 1), updated_at: now }))
    .where('owner_id', '=', ownerId)
    .where((eb) => eb(eb('balance', '-', eb.ref('reserved')), '>=', amount)),
);

/** A wallet as a change left it. */
export interface WalletAfter {
  wallet_id: string;
  balance: number;
  reserved: number;
  revision: number;
}

/** Tries of a hold whose conditional update lost a race with another reservation of the same wallet. */
const HOLD_TRIES = 3;

interface HoldAsked {
  owner_id: number;
  wanted: number;
  floor: number;
  token_id: number;
  token_limited: number;
}

type HoldRow = WalletAfter & { amount: number | null; available: number | null; token_taken: boolean };

// PostgreSQL: the holds of the pieces of a ledger batch that start together, one statement for all of them
// (combined(): one owner at most once in it). w locks and reads each wallet (already locked by the batch,
// runs/ledger.ts), h takes up to `wanted` of its available part where that covers `floor` (no row otherwise),
// t takes the same amount off the token's remain_quota (a limited token's only while it has that much left:
// token_taken false otherwise; its row was locked by the caller). Each row is found by its key for each input
// (lateral) and changed by its ctid (the row stays locked): joined to the input as a set, the planner (which
// takes the input for 100 rows) would scan whole tables, in a plan kept for the connection's life.
const holdStatement = prepared((db: Db, asked: string, now: number) => ({
  compile: () =>
    sql<HoldRow & { i: number }>`with x as (select * from json_to_recordset(${asked}::json) as x(i int, owner_id bigint, wanted bigint, floor bigint, token_id bigint, token_limited int)),
      w as (select x.i, l.tid, l.available from x cross join lateral (select ctid as tid, balance - reserved as available from edge_wallets where owner_id = x.owner_id for update) l),
      h as (update edge_wallets set reserved = edge_wallets.reserved + least(x.wanted, w.available), revision = edge_wallets.revision + 1, updated_at = ${now}
        from w join x on x.i = w.i where edge_wallets.ctid = any(array(select tid from w)) and edge_wallets.ctid = w.tid and w.available >= x.floor
        returning x.i, edge_wallets.wallet_id, edge_wallets.balance, edge_wallets.reserved, edge_wallets.revision, least(x.wanted, w.available) as amount, x.token_id, x.token_limited),
      tt as (select h.i, h.amount, h.token_limited, l.tid, l.remain_quota from h cross join lateral (select ctid as tid, remain_quota from edge_tokens where id = h.token_id) l where h.token_id <> 0),
      t as (update edge_tokens set remain_quota = edge_tokens.remain_quota - tt.amount from tt
        where edge_tokens.ctid = any(array(select tid from tt)) and edge_tokens.ctid = tt.tid and (tt.token_limited = 0 or tt.remain_quota >= tt.amount) returning tt.i)
    select x.i, h.wallet_id, h.balance, h.reserved, h.revision, h.amount, w.available, h.i in (select i from t) as token_taken
    from x left join h on h.i = x.i left join w on w.i = x.i order by x.i`.compile(db),
}));

const holdTogether = combined(
  async (trx: Db, asked: HoldAsked[]): Promise<HoldRow[]> => (await holdStatement(trx, JSON.stringify(asked.map((a, i) => ({ i, ...a }))), nowSeconds())).rows,
  (asked) => asked.owner_id,
);

/** A token a call holds on too: its row locked (lockedTokenQuota), whether it is limited. */
export interface HeldToken {
  id: number;
  unlimited: boolean;
}

/**
 * Holds up to `wanted` of the owner's available balance (balance - reserved), when that covers `floor`:
 * answers the wallet after the change and the amount held, or what was available when it did not cover
 * `floor`. Concurrent holds never overdraw: the row is locked, and the update is conditional. With `token`,
 * the amount held is also taken off the token (holdFromToken's rule; on PostgreSQL in the same statement,
 * shared with the holds of the batch's other pieces).
 */
export async function holdOnWallet(trx: Db, ownerId: number, wanted: number, floor: number, token?: HeldToken): Promise<{ wallet: WalletAfter; amount: number } | { available: number }> {
  if (dialectOf(trx) === 'postgres') {
    const r = await holdTogether(trx, { owner_id: ownerId, wanted, floor, token_id: token?.id ?? 0, token_limited: token && !token.unlimited ? 1 : 0 });
    if (r.amount === null) return { available: Number(r.available ?? 0) };
    if (token && !r.token_taken) throw tokenExhausted(Number(r.amount));
    return { wallet: { wallet_id: r.wallet_id, balance: Number(r.balance), reserved: Number(r.reserved), revision: Number(r.revision) }, amount: Number(r.amount) };
  }
  for (let i = 0; ; i++) {
    const w = await walletOf(trx, ownerId, locksRows(dialectOf(trx)));
    const available = w ? Number(w.balance) - Number(w.reserved) : 0;
    if (available < floor) return { available };
    const amount = Math.min(wanted, available);
    if (await reserve(trx, ownerId, amount)) {
      if (token) await holdFromToken(trx, token.id, amount, token.unlimited);
      // The wallet after the update, without reading it again: the update changed the row as read (its row is
      // locked, or, on SQLite, this transaction read it and is the one writer).
      return { wallet: { wallet_id: w!.wallet_id, balance: Number(w!.balance), reserved: Number(w!.reserved) + amount, revision: Number(w!.revision) + 1 }, amount };
    }
    if (i + 1 >= HOLD_TRIES) return { available };
  }
}

const walletsInOrder = prepared((db: Db, ownerIds: number[]) => ({
  compile: () => sql`select 1 from edge_wallets where owner_id = any(${ownerIds}::bigint[]) order by owner_id for update`.compile(db),
}));

/**
 * Locks the wallets of these owners until the transaction ends, in owner order (PostgreSQL: a ledger batch's
 * first statement, runs/ledger.ts).
 */
export async function lockWallets(trx: Db, ownerIds: number[]): Promise<void> {
  await walletsInOrder(trx, ownerIds);
}

/** The owner's wallet; with `lock`, its row locked until the transaction ends (where the database locks rows). */
export async function walletOf(db: Db, ownerId: number, lock = false) {
  return (await (lock ? lockedWalletRow : walletRow)(db, ownerId)).rows[0];
}

/** Creates the owner's wallet at zero unless it has one. */
export async function ensureWallet(db: Db, ownerId: number) {
  await db
    .insertInto('edge_wallets')
    .values({ owner_id: ownerId, wallet_id: crypto.randomUUID(), balance: 0, reserved: 0, revision: 0, updated_at: nowSeconds() })
    .onConflict((oc) => oc.column('owner_id').doNothing())
    .execute();
}

/** Adds `amount` to the balance, creating the wallet at zero first. Returns the wallet after the change. */
export async function credit(db: Db, ownerId: number, amount: number) {
  await ensureWallet(db, ownerId);
  const r = await db
    .updateTable('edge_wallets')
    .set((eb) => ({ balance: eb('balance', '+', amount), revision: eb('revision', '+', 1), updated_at: nowSeconds() }))
    .where('owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return (await afterUpdate(db, ownerId, r.numUpdatedRows))!;
}

// The wallet as the update left it (no RETURNING: MySQL has none). The row stays locked by the update
// until the caller's transaction ends, so the read sees exactly that change.
async function afterUpdate(db: Db, ownerId: number, changed: bigint) {
  return changed > 0n ? walletOf(db, ownerId) : undefined;
}

/**
 * Reserves `amount` when the available part (balance - reserved) covers it, in one conditional update:
 * concurrent reservations never overdraw. Answers whether it did.
 */
async function reserve(db: Db, ownerId: number, amount: number): Promise<boolean> {
  const r = await reserveWhenAvailable(db, ownerId, amount, nowSeconds());
  return (r.numAffectedRows ?? 0n) > 0n;
}

/** Every wallet with its owner's name, by owner name. */
export async function listWallets(db: Db) {
  return db
    .selectFrom('edge_wallets')
    .innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id')
    .select(['edge_owners.name as owner', 'edge_wallets.owner_id', 'edge_wallets.wallet_id', 'edge_wallets.balance', 'edge_wallets.reserved', 'edge_wallets.updated_at'])
    .orderBy('edge_owners.name')
    .execute();
}

/**
 * Sets the balance to `balance` unless that is below what running calls hold; the wallet after the change,
 * or undefined (refused). The row stays locked until the caller's transaction ends.
 */
export async function setBalance(db: Db, ownerId: number, balance: number) {
  const r = await db
    .updateTable('edge_wallets')
    .set((eb) => ({ balance, revision: eb('revision', '+', 1), updated_at: nowSeconds() }))
    .where('owner_id', '=', ownerId)
    .where('reserved', '<=', balance)
    .executeTakeFirstOrThrow();
  return afterUpdate(db, ownerId, r.numUpdatedRows);
}

/** The wallets of these owners (an owner without one is left out). */
export async function walletsOf(db: Db, ownerIds: number[]) {
  if (ownerIds.length === 0) return [];
  return db.selectFrom('edge_wallets').selectAll().where('owner_id', 'in', ownerIds).execute();
}

/**
 * Records a credit made with an id (in the credit's transaction): a second credit with the id fails as a
 * duplicate. `kind` (default credit) and `reason` make the usage log's top-up and manage rows.
 */
export async function insertCredit(db: Db, row: { credit_id: string; owner_id: number; amount: number; wallet: string; kind?: string; reason?: string }) {
  await db.insertInto('edge_credits').values({ ...row, created_at: nowSeconds() }).execute();
}

export async function creditOf(db: Db, creditId: string) {
  return db.selectFrom('edge_credits').selectAll().where('credit_id', '=', creditId).executeTakeFirst();
}
