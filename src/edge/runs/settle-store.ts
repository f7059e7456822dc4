import { sql } from 'kysely';
import { dialectOf, locksRows } from '../../kit/db/index.js';
import { insertRows } from '../../kit/db/insert-rows.js';
import { prepared } from '../../kit/db/prepared.js';
import type { EdgeDB, EdgeRunTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { walletOf, type WalletAfter } from '../wallets/store.js';

/** A settlement's change of the owner's wallet and of its run (settle.ts says what it means). */
export interface Charge {
  runId: string;
  ownerId: number;
  /** The run's reservation, released. */
  reserved: number;
  /** What the call cost; charged up to the reservation and the wallet's available part, and at most `cap`. */
  cost: number;
  cap: number;
  /** A served call counts in request_count even when it cost nothing. */
  succeeded: boolean;
  run: { status: EdgeRunTable['status']; revision: number; promptTokens: number; completionTokens: number; output: string | null; errorCode: string | null; errorMessage: string | null; finishedAt: number };
}

/**
 * Charges the wallet what the call cost, max(0, min(cost, cap, reserved + the wallet's available part)), and
 * releases the reservation; ends the run with the charge as its cost. Answers the wallet after the change and
 * the charge. The run's row must be locked by the caller (its token's too, before this locks the wallet).
 * On PostgreSQL in one statement, one round trip: the same rule written in SQL.
 */
export async function chargeAndFinish(trx: Db, c: Charge): Promise<{ wallet: WalletAfter; charged: number }> {
  const updatedAt = Math.floor(c.run.finishedAt / 1000);
  if (dialectOf(trx) === 'postgres') {
    const r = c.run;
    const row = (await chargeInOneStatement(trx, c.ownerId, c.cost, c.cap, c.reserved, c.runId, r.status, r.revision, r.promptTokens, r.completionTokens, r.output, r.errorCode, r.errorMessage, r.finishedAt, updatedAt, c.succeeded ? 1 : 0)).rows[0];
    if (!row || Number(row.finished) !== 1) throw new Error(`settle: wallet of owner ${c.ownerId} not updated`);
    return { wallet: { wallet_id: row.wallet_id, balance: Number(row.balance), reserved: Number(row.reserved), revision: Number(row.revision) }, charged: Number(row.charged) };
  }
  const wallet = await walletOf(trx, c.ownerId, locksRows(dialectOf(trx)));
  if (!wallet) throw new Error(`settle: owner ${c.ownerId} has no wallet`);
  const spare = Math.max(0, Number(wallet.balance) - Number(wallet.reserved));
  const charged = Math.max(0, Math.min(c.cost, c.cap, c.reserved + spare));
  const updated = await chargeWallet(trx, charged, c.reserved, updatedAt, c.succeeded || charged > 0 ? 1 : 0, c.ownerId);
  if (Number(updated.numAffectedRows ?? 0) !== 1) throw new Error(`settle: wallet of owner ${c.ownerId} not updated`);
  const r = c.run;
  await finishRun(trx, r.status, r.revision, charged, r.promptTokens, r.completionTokens, r.output, r.errorCode, r.errorMessage, r.finishedAt, c.runId);
  // The wallet after the update, without reading it again: its row is locked (or, on SQLite, this is the one writer).
  return { wallet: { wallet_id: wallet.wallet_id, balance: Number(wallet.balance) - charged, reserved: Number(wallet.reserved) - c.reserved, revision: Number(wallet.revision) + 1 }, charged };
}

/** Settlement rows, queued on a ledger batch and written with its others by one INSERT. */
export const insertSettlementRows = insertRows<EdgeDB>('edge_settlements', ['run_id', 'owner_id', 'reserved', 'charged', 'outcome', 'source', 'created_at']);

// The settlement's statements (see prepared()): built and compiled once per dialect.
const chargeWallet = prepared((db: Db, charged: number, reserved: number, updatedAt: number, served: number, ownerId: number) =>
  db
    .updateTable('edge_wallets')
    .set((eb) => ({
      balance: eb('balance', '-', charged),
      reserved: eb('reserved', '-', reserved),
      revision: eb('revision', '+', 1),
      updated_at: updatedAt,
      used_quota: eb('used_quota', '+', charged),
      request_count: eb('request_count', '+', served),
    }))
    .where('owner_id', '=', ownerId),
);

const finishRun = prepared(
  (db: Db, status: EdgeRunTable['status'], revision: number, cost: number, promptTokens: number, completionTokens: number, output: string | null, errorCode: string | null, errorMessage: string | null, finishedAt: number, runId: string) =>
    db
      .updateTable('edge_runs')
      .set({ status, revision, cost, prompt_tokens: promptTokens, completion_tokens: completionTokens, output, error_code: errorCode, error_message: errorMessage, finished_at: finishedAt, lease_owner: null, lease_until: null })
      .where('run_id', '=', runId),
);

// chargeWallet and finishRun with the wallet's read in one statement: the CTE locks and reads the wallet and
// works out the charge; the run is ended by a data-modifying CTE beside the wallet's update.
const chargeInOneStatement = prepared(
  (db: Db, ownerId: number, cost: number, cap: number, reserved: number, runId: string, status: string, revision: number, promptTokens: number, completionTokens: number, output: string | null, errorCode: string | null, errorMessage: string | null, finishedAt: number, updatedAt: number, succeeded: number) => ({
    compile: () =>
      sql<WalletAfter & { charged: number; finished: number }>`with w as (select owner_id, balance, reserved from edge_wallets where owner_id = ${ownerId} for update),
        c as (select greatest(0, least(${cost}::bigint, ${cap}::bigint, ${reserved}::bigint + greatest(0, w.balance - w.reserved))) as charged from w),
        r as (update edge_runs set status = ${status}, revision = ${revision}, cost = (select charged from c), prompt_tokens = ${promptTokens},
                completion_tokens = ${completionTokens}, output = ${output}, error_code = ${errorCode}, error_message = ${errorMessage},
                finished_at = ${finishedAt}, lease_owner = null, lease_until = null
              where run_id = ${runId} and exists (select 1 from c) returning 1)
      update edge_wallets set balance = edge_wallets.balance - c.charged, reserved = edge_wallets.reserved - ${reserved}::bigint,
        revision = edge_wallets.revision + 1, updated_at = ${updatedAt}, used_quota = edge_wallets.used_quota + c.charged,
        request_count = edge_wallets.request_count + case when ${succeeded}::int = 1 or c.charged > 0 then 1 else 0 end
      from w, c where edge_wallets.owner_id = w.owner_id
      returning edge_wallets.wallet_id, edge_wallets.balance, edge_wallets.reserved, edge_wallets.revision, c.charged, (select count(*) from r) as finished`.compile(db),
  }),
);
