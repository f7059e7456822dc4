import { isUniqueViolation } from '../../kit/db/index.js';
import type { Batch } from '../../kit/db/group-commit.js';
import type { EdgeContext } from '../context.js';
import { FINAL_STATUSES, type EdgeDB, type EdgeRunTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { endpointsOf, queueEvents } from '../outbox/store.js';
import { chargeRun, insertSettlementRows, type Ending } from './settle-store.js';
import { runOf } from './store.js';

export type SettlementSource = 'worker' | 'sync' | 'cancel' | 'expiry' | 'reconcile';

export interface RunOutcome {
  status: 'succeeded' | 'failed' | 'cancelled';
  /** What the call cost in wallet units (the relay's quota); 0 when nothing was served. */
  cost: number;
  promptTokens?: number;
  completionTokens?: number;
  output?: string | null;
  error?: { code: string; message: string } | null;
  source: SettlementSource;
}

export interface Settlement {
  /** false: the run was already settled (by this or another process) and nothing changed. */
  applied: boolean;
  status: EdgeRunTable['status'];
  charged: number;
}

const EVENT_OF = { succeeded: 'run.completed@1', failed: 'run.failed@1', cancelled: 'run.cancelled@1' } as const;

/**
 * Ends a run and settles its reservation, exactly once per run id, in one piece of a ledger batch (one
 * transaction, shared with concurrent reservations and settlements: runs/ledger.ts; `ownerId`, the run's
 * owner, orders it in its batch): the wallet is charged the run's cost — its reservation, and beyond it (an
 * upstream that answered more than the relay asked for, or the model's overdraft) what the available balance
 * has (never below zero, never another run's reservation) — and the rest of the reservation is released; the run gets its final state; a
 * settlement row (primary key: the run id) and the events run.completed|failed|cancelled@1,
 * wallet.settled@1 and billing.finalization-reconciliation-resolution.applied@1 are written. The wallet's
 * used_quota and request_count (new-api's) grow with the charge and a served call; a call of an account
 * user's token also gives the token back what its hold did not spend and adds the charge to its used_quota
 * (a limited token is never charged beyond its hold and what it has left). A second
 * settlement of the same run, concurrent or later, finds the run final under its row lock and changes nothing.
 * Resolves once the settlement committed: a synchronous call's answer ends only after that (calls/service.ts).
 */
export async function settleRun(ctx: EdgeContext, runId: string, o: RunOutcome, ownerId: number): Promise<Settlement> {
  let s: Settlement & { reserved?: number };
  try {
    s = await ctx.ledger.write(ownerId, (trx, batch) => settleOnce(trx, batch, runId, ownerId, o));
  } catch (e) {
    try {
      // The settlement row's key: another process settled the run between our read and our write.
      if (!isUniqueViolation(e)) throw e;
      const run = await runOf(ctx.db, runId);
      s = { applied: false, status: run!.status, charged: Number(run!.cost) };
    } catch (failure) {
      ctx.metrics.settled(o.source, 'error');
      throw failure;
    }
  }
  if (s.applied) ctx.metrics.settled(o.source, o.status, s.reserved, s.charged);
  else ctx.metrics.settled(o.source, 'already_settled');
  return { applied: s.applied, status: s.status, charged: s.charged };
}

/** One settlement, a piece of a ledger batch: it may run more than once before its commit (runs/ledger.ts). */
async function settleOnce(trx: Db, batch: Batch<EdgeDB>, runId: string, ownerId: number, o: RunOutcome): Promise<Settlement & { reserved?: number }> {
  const now = Date.now();
  const end: Ending = { status: o.status, cost: Math.round(o.cost), promptTokens: o.promptTokens ?? 0, completionTokens: o.completionTokens ?? 0, output: o.output ?? null, errorCode: o.error?.code ?? null, errorMessage: o.error?.message.slice(0, 2000) ?? null, finishedAt: now };
  const { run, charge: atOnce, token } = await chargeRun(trx, runId, ownerId, end);
  let charge = atOnce;
  if (!run) throw new Error(`settle: run ${runId} does not exist`);
  if (FINAL_STATUSES.includes(run.status)) return { applied: false, status: run.status, charged: Number(run.cost) };
  const reserved = Number(run.reserved_amount);
  if (!charge) {
    // A token's run (on PostgreSQL every run): the first call locked the token before the wallet is charged, in
    // the reservation's order (runs/reserve.ts); a limited token is never charged beyond its hold and what it has left.
    ({ charge } = await chargeRun(trx, runId, ownerId, end, { cap: token && !token.unlimited ? reserved + Math.max(0, token.remain) : Number.MAX_SAFE_INTEGER, run }));
    if (!charge) throw new Error(`settle: run ${runId} not charged`);
  }
  const { wallet: after, charged } = charge;
  const revision = Number(run.revision) + 1;
  batch.add(insertSettlementRows, [runId, run.owner_id, reserved, charged, o.status, o.source, now]);
  const base = { ownerId: Number(run.owner_id), traceparent: run.traceparent };
  const endpoints = await endpointsOf(trx, Number(run.owner_id));
  const balance = Number(after.balance);
  const stillReserved = Number(after.reserved);
  queueEvents(
    batch,
    [
      { ...base, type: EVENT_OF[o.status], aggregateId: runId, aggregateRevision: revision, payload: { runId, requestId: run.request_id, status: o.status, cost: charged, promptTokens: o.promptTokens ?? 0, completionTokens: o.completionTokens ?? 0, ...(o.error ? { error: o.error } : {}) } },
      { ...base, type: 'wallet.settled@1', aggregateId: after.wallet_id, aggregateRevision: Number(after.revision), payload: { walletId: after.wallet_id, runId, reserved, charged, released: Math.max(0, reserved - charged), balance, reserved_total: stillReserved, available: balance - stillReserved } },
      { ...base, type: 'billing.finalization-reconciliation-resolution.applied@1', aggregateId: `billing:${runId}`, aggregateRevision: 1, payload: { runId, resolution: charged > 0 ? 'charged' : 'released', source: o.source, reserved, charged, cost: Math.round(o.cost) } },
    ],
    now,
    endpoints,
  );
  return { applied: true, status: o.status, charged, reserved };
}
