import crypto from 'node:crypto';
import { sql } from 'kysely';
import { dialectOf, locksRows } from '../../kit/db/index.js';
import type { Db } from '../keys/store.js';
import { nowSeconds } from '../db.js';
import { prepared } from '../../kit/db/prepared.js';
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

// PostgreSQL: the hold in one statement, one round trip: the CTE locks and reads the wallet, the update takes
// up to `wanted` of its available part when that covers `floor`; no row when it does not. With a token (its row
// already locked by the caller, before the wallet), t takes the same amount off its remain_quota (a limited
// token's only while it has that much left: token_taken 0 otherwise).
const holdInOneStatement = prepared((db: Db, ownerId: number, wanted: number, floor: number, now: number, tokenId: number, tokenLimited: number) => ({
  compile: () =>
    sql<WalletAfter & { amount: number; token_taken: number }>`with w as (select owner_id, balance - reserved as available from edge_wallets where owner_id = ${ownerId} for update),
      h as (update edge_wallets set reserved = edge_wallets.reserved + least(${wanted}, w.available), revision = edge_wallets.revision + 1, updated_at = ${now}
        from w where edge_wallets.owner_id = w.owner_id and w.available >= ${floor}
        returning edge_wallets.wallet_id, edge_wallets.balance, edge_wallets.reserved, edge_wallets.revision, least(${wanted}, w.available) as amount),
      t as (update edge_tokens set remain_quota = edge_tokens.remain_quota - h.amount from h
        where edge_tokens.id = ${tokenId} and (${tokenLimited}::int = 0 or edge_tokens.remain_quota >= h.amount) returning 1)
    select h.*, (select count(*) from t) as token_taken from h`.compile(db),
}));

/** A token a call holds on too: its row locked (lockedTokenQuota), whether it is limited. */
export interface HeldToken {
  id: number;
  unlimited: boolean;
}

/**
 * Holds up to `wanted` of the owner's available balance (balance - reserved), when that covers `floor`:
 * answers the wallet after the change and the amount held, or what was available when it did not cover
 * `floor`. Concurrent holds never overdraw: the row is locked, and the update is conditional. With `token`,
 * the amount held is also taken off the token (holdFromToken's rule; on PostgreSQL in the same statement).
 */
export async function holdOnWallet(trx: Db, ownerId: number, wanted: number, floor: number, token?: HeldToken): Promise<{ wallet: WalletAfter; amount: number } | { available: number }> {
  if (dialectOf(trx) === 'postgres') {
    const r = (await holdInOneStatement(trx, ownerId, wanted, floor, nowSeconds(), token?.id ?? 0, token && !token.unlimited ? 1 : 0)).rows[0];
    if (r) {
      if (token && Number(r.token_taken) !== 1) throw tokenExhausted(Number(r.amount));
      return { wallet: { wallet_id: r.wallet_id, balance: Number(r.balance), reserved: Number(r.reserved), revision: Number(r.revision) }, amount: Number(r.amount) };
    }
    const w = await walletOf(trx, ownerId);
    return { available: w ? Number(w.balance) - Number(w.reserved) : 0 };
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
