import { sql } from 'kysely';
import { dialectOf, locksRows } from '../../kit/db/index.js';
import { insertRows } from '../../kit/db/insert-rows.js';
import { prepared } from '../../kit/db/prepared.js';
import { combined } from '../../kit/db/combined.js';
import { FINAL_STATUSES, type EdgeDB, type EdgeRunTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { lockedTokenQuota, settleOnToken } from '../customers/tokens/store.js';
import { walletOf, type WalletAfter } from '../wallets/store.js';

/** What a settlement reads of its run. */
export type RunToSettle = Pick<EdgeRunTable, 'run_id' | 'owner_id' | 'reserved_amount' | 'status' | 'revision' | 'token_id' | 'request_id' | 'traceparent' | 'cost'>;

/** How the run ends (settle.ts says what it means). */
export interface Ending {
  status: EdgeRunTable['status'];
  /** What the call cost, in whole units. */
  cost: number;
  promptTokens: number;
  completionTokens: number;
  output: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  finishedAt: number;
}

export interface Charge {
  wallet: WalletAfter;
  charged: number;
}

/** A token's quota, its row locked. */
export type TokenQuota = NonNullable<Awaited<ReturnType<typeof lockedTokenQuota>>>;

/**
 * Locks and reads the run. When it is not final, charges the owner's wallet max(0, min(cost, cap, reserved +
 * the wallet's available part)), releases its reservation and ends the run with that charge as its cost and
 * its revision + 1; answers the run as read and the charge. A run of a token is charged only once its token is
 * locked (the token before the wallet, as reservations take them; on PostgreSQL the batch locked the wallet
 * first, runs/ledger.ts): without `token` the run is answered with its token's quota, locked; with it (the
 * token's cap and the run as the first call answered it), the run is charged and the token settled
 * (settleOnToken). On PostgreSQL every run is charged by that second call: the first only locks the run and its
 * token, so that the second's statement, which changes them by their ctid, sees the versions it locked (a row
 * updated by another transaction while a statement waited for its lock has a version that statement cannot see).
 * `ownerId` is the run's owner (on PostgreSQL it decides which settlements share a statement). On PostgreSQL
 * each call is one statement, shared with the batch's other pieces (the same rule, written in SQL); elsewhere a
 * token's run is not read again.
 */
export async function chargeRun(trx: Db, runId: string, ownerId: number, end: Ending, token?: { cap: number; run: RunToSettle }): Promise<{ run?: RunToSettle; charge?: Charge; token?: TokenQuota | null }> {
  const capGiven = token !== undefined;
  const cap = token?.cap ?? Number.MAX_SAFE_INTEGER;
  const updatedAt = Math.floor(end.finishedAt / 1000);
  const served = end.status === 'succeeded' ? 1 : 0;
  if (dialectOf(trx) === 'postgres') {
    const e = end;
    const row = await settleTogether(trx, {
      owner: ownerId, run_id: runId, cap_given: capGiven ? 1 : 0, cost: e.cost, cap, status: e.status, prompt_tokens: e.promptTokens, completion_tokens: e.completionTokens,
      output: e.output, error_code: e.errorCode, error_message: e.errorMessage, finished_at: e.finishedAt, updated_at: updatedAt, served,
    });
    if (row.run_id === null) return {};
    const run: RunToSettle = { run_id: row.run_id, owner_id: Number(row.owner_id), reserved_amount: Number(row.reserved_amount), status: row.status, revision: Number(row.revision), token_id: Number(row.token_id), request_id: row.request_id, traceparent: row.traceparent, cost: Number(row.cost) };
    const quota = row.token_remain === null ? null : { remain: Number(row.token_remain), unlimited: Number(row.token_unlimited) === 1 };
    // Every run is charged by the second call, once the first locked it (and its token) in a statement of its own.
    if (FINAL_STATUSES.includes(run.status) || !capGiven) return { run, token: quota };
    if (row.wallet_id === null) throw new Error(`settle: owner ${run.owner_id} has no wallet`);
    if (!row.finished) throw new Error(`settle: run ${runId} not updated`);
    return { run, charge: { wallet: { wallet_id: row.wallet_id, balance: Number(row.balance), reserved: Number(row.wallet_reserved), revision: Number(row.wallet_revision) }, charged: Number(row.charged) } };
  }
  const lock = locksRows(dialectOf(trx));
  const run = token?.run ?? (await runToSettle(trx, runId, lock));
  if (!run || FINAL_STATUSES.includes(run.status)) return { run };
  const tokenId = Number(run.token_id);
  if (!chargeable(run, capGiven)) return { run, token: await lockedTokenQuota(trx, tokenId) };
  const owner = Number(run.owner_id);
  const reserved = Number(run.reserved_amount);
  const wallet = await walletOf(trx, owner, lock);
  if (!wallet) throw new Error(`settle: owner ${owner} has no wallet`);
  const spare = Math.max(0, Number(wallet.balance) - Number(wallet.reserved));
  const charged = Math.max(0, Math.min(end.cost, cap, reserved + spare));
  const updated = await chargeWallet(trx, charged, reserved, updatedAt, served || charged > 0 ? 1 : 0, owner);
  if (Number(updated.numAffectedRows ?? 0) !== 1) throw new Error(`settle: wallet of owner ${owner} not updated`);
  const e = end;
  await finishRun(trx, e.status, Number(run.revision) + 1, charged, e.promptTokens, e.completionTokens, e.output, e.errorCode, e.errorMessage, e.finishedAt, runId);
  if (tokenId) await settleOnToken(trx, tokenId, reserved, charged, updatedAt);
  // The wallet after the update, without reading it again: its row is locked (or, on SQLite, this is the one writer).
  return { run, charge: { wallet: { wallet_id: wallet.wallet_id, balance: Number(wallet.balance) - charged, reserved: Number(wallet.reserved) - reserved, revision: Number(wallet.revision) + 1 }, charged } };
}

/** A run is charged when it is not final, and (it has no token, or its token is locked). */
function chargeable(run: Pick<RunToSettle, 'status' | 'token_id'>, tokenLocked: boolean) {
  return !FINAL_STATUSES.includes(run.status) && (Number(run.token_id) === 0 || tokenLocked);
}

/** Settlement rows, queued on a ledger batch and written with its others by one INSERT. */
export const insertSettlementRows = insertRows<EdgeDB>('edge_settlements', ['run_id', 'owner_id', 'reserved', 'charged', 'outcome', 'source', 'created_at']);

// The settlement's statements (see prepared()): built and compiled once per dialect.
const SETTLE_COLUMNS = ['run_id', 'owner_id', 'reserved_amount', 'status', 'revision', 'token_id', 'request_id', 'traceparent', 'cost'] as const;
const runRow = prepared((db: Db, runId: string) => db.selectFrom('edge_runs').select(SETTLE_COLUMNS).where('run_id', '=', runId));
const lockedRunRow = prepared((db: Db, runId: string) => db.selectFrom('edge_runs').select(SETTLE_COLUMNS).where('run_id', '=', runId).forUpdate());

/** What a settlement reads of its run (not the whole row: a run has 30 columns, its input and output among them). */
async function runToSettle(db: Db, runId: string, lock: boolean): Promise<RunToSettle | undefined> {
  return (await (lock ? lockedRunRow : runRow)(db, runId)).rows[0];
}

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

type SettledRow = RunToSettle & { run_id: string | null; wallet_id: string | null; balance: number; wallet_reserved: number; wallet_revision: number; charged: number; finished: boolean; token_remain: number | null; token_unlimited: number | null };

interface SettleAsked {
  owner: number;
  run_id: string;
  cap_given: number;
  cost: number;
  cap: number;
  status: string;
  prompt_tokens: number;
  completion_tokens: number;
  output: string | null;
  error_code: string | null;
  error_message: string | null;
  finished_at: number;
  updated_at: number;
  served: number;
}

// chargeRun on PostgreSQL, for the settlements of the pieces of a ledger batch that start together, one
// statement for all of them (combined(): one owner at most once in it; its wallet already locked by the batch,
// runs/ledger.ts): r locks and reads each run, tq its token while the run is not final, w its owner's wallet
// when the run is chargeable (go), c works out the charge, u ends the run, v charges the wallet and tk settles
// the token (data-modifying CTEs). A run is chargeable only on the second call (cap_given), so it and its token
// are locked (first call) before they are charged (second). Rows are found and changed as in the hold
// (wallets/store.ts): by their key for each input, then by their ctid (locked by an earlier statement).
const settleStatement = prepared((db: Db, asked: string) => ({
  compile: () =>
    sql<SettledRow & { i: number }>`with x as (select * from json_to_recordset(${asked}::json) as x(i int, run_id text, cap_given int, cost bigint, cap bigint, status text,
          prompt_tokens bigint, completion_tokens bigint, output text, error_code text, error_message text, finished_at bigint, updated_at bigint, served int)),
        r as (select x.i, l.* from x cross join lateral (select ctid as tid, run_id, owner_id, reserved_amount, status, revision, token_id, request_id, traceparent, cost
                from edge_runs where run_id = x.run_id for update) l),
        tq as (select r.i, l.* from r cross join lateral (select ctid as tid, remain_quota, unlimited_quota from edge_tokens where id = r.token_id for update) l
               where r.token_id <> 0 and r.status not in ('succeeded', 'failed', 'cancelled')),
        go as (select r.*, x.cost as asked, x.cap from r join x on x.i = r.i where r.status not in ('succeeded', 'failed', 'cancelled') and x.cap_given = 1),
        w as (select go.i, l.* from go cross join lateral (select ctid as tid, balance, reserved from edge_wallets where owner_id = go.owner_id for update) l),
        c as (select go.i, greatest(0, least(go.asked, go.cap, go.reserved_amount + greatest(0, w.balance - w.reserved))) as charged from go join w on w.i = go.i),
        u as (update edge_runs set status = x.status, revision = go.revision + 1, cost = c.charged, prompt_tokens = x.prompt_tokens, completion_tokens = x.completion_tokens,
                output = x.output, error_code = x.error_code, error_message = x.error_message, finished_at = x.finished_at, lease_owner = null, lease_until = null
              from go join c on c.i = go.i join x on x.i = go.i where edge_runs.ctid = any(array(select tid from go)) and edge_runs.ctid = go.tid returning go.i),
        v as (update edge_wallets set balance = edge_wallets.balance - c.charged, reserved = edge_wallets.reserved - go.reserved_amount, revision = edge_wallets.revision + 1,
                updated_at = x.updated_at, used_quota = edge_wallets.used_quota + c.charged,
                request_count = edge_wallets.request_count + case when x.served = 1 or c.charged > 0 then 1 else 0 end
              from w join go on go.i = w.i join c on c.i = w.i join x on x.i = w.i where edge_wallets.ctid = any(array(select tid from w)) and edge_wallets.ctid = w.tid
              returning w.i, edge_wallets.wallet_id, edge_wallets.balance, edge_wallets.reserved, edge_wallets.revision),
        tg as (select go.i, go.reserved_amount, l.tid from go cross join lateral (select ctid as tid from edge_tokens where id = go.token_id) l where go.token_id <> 0),
        tk as (update edge_tokens set remain_quota = edge_tokens.remain_quota + tg.reserved_amount - c.charged, used_quota = edge_tokens.used_quota + c.charged,
                accessed_time = x.updated_at
              from tg join c on c.i = tg.i join x on x.i = tg.i where edge_tokens.ctid = any(array(select tid from tg)) and edge_tokens.ctid = tg.tid returning 1)
      select x.i, r.run_id, r.owner_id, r.reserved_amount, r.status, r.revision, r.token_id, r.request_id, r.traceparent, r.cost,
        v.wallet_id, v.balance, v.reserved as wallet_reserved, v.revision as wallet_revision, c.charged, u.i is not null as finished,
        tq.remain_quota as token_remain, tq.unlimited_quota as token_unlimited
      from x left join r on r.i = x.i left join v on v.i = x.i left join c on c.i = x.i left join u on u.i = x.i left join tq on tq.i = x.i
      order by x.i`.compile(db),
}));

const settleTogether = combined(
  async (trx: Db, asked: SettleAsked[]): Promise<SettledRow[]> => (await settleStatement(trx, JSON.stringify(asked.map(({ owner: _, ...a }, i) => ({ i, ...a }))))).rows,
  (asked) => asked.owner,
);
