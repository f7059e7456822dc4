import crypto from 'node:crypto';
import type { RelayPort, RelaySummary } from '../../contract/relay.js';
import type { EdgeContext } from '../context.js';
import { modelOf } from '../models/store.js';
import { appendEvent } from '../outbox/store.js';
import { callerOf, costOf, executeRun, failureOf, failureSummary } from './execute.js';
import { reconcile } from './reconcile.js';
import { settleRun, type RunOutcome } from './settle.js';
import { claimableRuns, claimRun, isCancelRequested, renewLease, runOf } from './store.js';

/** How a run this worker took ended: its settlement, already settled elsewhere, or lost (its lease was taken over). */
type WorkerEnd = RunOutcome['status'] | 'already_settled' | 'lost';

/** How often a worker also settles overdue runs (expired reservations, calls of crashed processes). */
const SWEEP_EVERY_MS = 30_000;

/**
 * Executes admitted runs: polls for runs that are free (reserved, or held by a worker whose lease ran out),
 * takes each with a conditional update (one worker per run across instances), renews the lease while the
 * call runs, and settles the run when it ends. A cancel request aborts the call; a lost lease (the run was
 * taken over or settled elsewhere) stops this worker's part without settling. A run taken over whose call the
 * gateway already served is settled from the gateway's log instead of being executed again.
 */
export class RunWorker {
  readonly id = `worker-${crypto.randomUUID()}`;
  private timer: NodeJS.Timeout | null = null;
  private running = new Set<Promise<void>>();
  /** The runs this worker is executing: never taken again by it, should its lease lapse meanwhile (a stalled event loop). */
  private held = new Set<string>();
  private ticking = false;
  private lastSweep = 0;

  constructor(
    private readonly ctx: EdgeContext,
    private readonly relay: RelayPort,
  ) {}

  start() {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.ctx.config.edge.runs.pollMs);
    this.timer.unref();
  }

  /** Stops taking runs and waits for the ones in flight. */
  async stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.running]);
  }

  /** Takes what free slots allow; resolves once the runs are taken (not finished). */
  async tick() {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const cfg = this.ctx.config.edge.runs;
      const now = Date.now();
      if (now - this.lastSweep >= SWEEP_EVERY_MS) {
        this.lastSweep = now;
        await reconcile(this.ctx, this.relay, { now, limit: 100 });
      }
      const free = cfg.workerConcurrency - this.running.size;
      if (free <= 0) return;
      for (const { run_id } of await claimableRuns(this.ctx.db, now, free)) {
        if (this.held.has(run_id)) continue;
        const attempt = await this.claim(run_id, now);
        if (!attempt) continue;
        this.held.add(run_id);
        this.ctx.metrics.workerTook(attempt > 1);
        const p = this.execute(run_id)
          .then((end) => this.ctx.metrics.workerEnded(end))
          // A run left unsettled here (the database failed) is settled by the reconciliation after its deadline.
          .catch((e) => {
            this.ctx.metrics.workerEnded(null);
            this.ctx.log.error({ err: { message: (e as Error).message }, runId: run_id }, 'run worker: run not settled');
          })
          .finally(() => {
            this.running.delete(p);
            this.held.delete(run_id);
          });
        this.running.add(p);
      }
    } catch (e) {
      this.ctx.log.warn({ err: { message: (e as Error).message } }, 'run worker: poll failed');
    } finally {
      this.ticking = false;
    }
  }

  /** Waits until every run taken so far has ended (tests, `edge worker --once`). */
  async drain() {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /** Takes a free run: its attempt number (above 1: a takeover), 0 when another worker was first. */
  private async claim(runId: string, now: number): Promise<number> {
    const cfg = this.ctx.config.edge.runs;
    return this.ctx.db.transaction().execute(async (trx) => {
      if (!(await claimRun(trx, runId, this.id, now, now + cfg.leaseMs, now + cfg.timeoutMs))) return 0;
      const run = (await runOf(trx, runId))!;
      await appendEvent(trx, { type: 'run.started@1', aggregateId: runId, aggregateRevision: Number(run.revision), ownerId: Number(run.owner_id), traceparent: run.traceparent, payload: { runId, requestId: run.request_id, status: 'running', attempt: Number(run.attempts), startedAt: new Date(now).toISOString() } }, now);
      return Number(run.attempts);
    });
  }

  /** Settles a run this worker executed: how it ended for the metrics. */
  private async settle(runId: string, ownerId: number, o: RunOutcome): Promise<WorkerEnd> {
    const s = await settleRun(this.ctx, runId, o, ownerId);
    return s.applied ? o.status : 'already_settled';
  }

  /** Executes a taken run and settles it: how it ended (null: left for a later attempt or the reconciliation). */
  private async execute(runId: string): Promise<WorkerEnd | null> {
    const cfg = this.ctx.config.edge.runs;
    const stop = new AbortController();
    let reason: 'cancelled' | 'lost' | null = null;
    let ownerId = 0;
    const heartbeat = setInterval(async () => {
      try {
        if (await isCancelRequested(this.ctx.db, runId)) reason = 'cancelled';
        else if (!(await renewLease(this.ctx.db, runId, this.id, Date.now() + cfg.leaseMs))) reason = 'lost';
        if (reason) stop.abort();
      } catch (e) {
        this.ctx.log.warn({ err: { message: (e as Error).message }, runId }, 'run worker: lease renewal failed');
      }
    }, Math.max(100, Math.floor(cfg.leaseMs / 3)));
    try {
      // How the run ended; settled after the try, so that a settlement that fails (the database) is never taken
      // for a failure of the call and settled again as failed and free: it is left for the reconciliation.
      let ending: RunOutcome;
      try {
        const run = (await runOf(this.ctx.db, runId))!;
        ownerId = Number(run.owner_id);
        const model = await modelOf(this.ctx.db, run.public_model_id);
        // Taken over: the crashed attempt's call may have been served (its answer lost with the process). Called
        // again, the gateway's log would end in this attempt's outcome and hide the served call from the
        // reconciliation (GR04 answers the newest row), so such a run is settled from the log as the
        // reconciliation would, charged once; unreadable log: left to a later attempt or the reconciliation.
        let earlier: RelaySummary | null = null;
        if (model && Number(run.attempts) > 1) {
          try {
            earlier = await this.relay.summaryOf(runId, callerOf(Number(run.owner_id), model));
          } catch (e) {
            this.ctx.log.warn({ err: { message: (e as Error)?.message }, runId }, "run worker: the gateway's log of a run taken over could not be read; left for later");
            return null;
          }
        }
        if (!model) ending = { status: 'failed', cost: 0, error: { code: 'model_not_found', message: `model ${run.public_model_id} was removed` }, source: 'worker' };
        else if (earlier && earlier.error_code === null) ending = { status: 'succeeded', ...costOf(earlier), source: 'worker' };
        else {
          const { output, summary } = await executeRun(this.relay, run, model, stop.signal);
          ending = { status: 'succeeded', ...costOf(summary), output, source: 'worker' };
        }
      } catch (e) {
        if (reason === 'lost') return 'lost';
        const summary = failureSummary(e);
        if (reason === 'cancelled') ending = { status: 'cancelled', ...costOf(summary), source: 'cancel' };
        else ending = { status: 'failed', ...costOf(summary), error: failureOf(e), source: 'worker' };
      }
      return await this.settle(runId, ownerId, ending);
    } finally {
      clearInterval(heartbeat);
    }
  }
}
