import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Counter, Gauge, type Metric, type Registry } from 'prom-client';
import { RefreshingCache } from '../kit/cache/refreshing-cache.js';
import { AppError } from '../kit/http/errors.js';
import { children } from '../kit/metrics/children.js';
import { deferredCounter } from '../kit/metrics/deferred-counter.js';
import type { EdgeDB } from './db.js';

export type SettlementOutcome = 'succeeded' | 'failed' | 'cancelled' | 'already_settled' | 'error';

/** How long the outbox counts are answered before the database is asked again. */
const OUTBOX_FRESH_MS = 5_000;

interface OutboxState {
  pending: number;
  oldestPendingMs: number | null;
  dead: number;
}

/**
 * The edge's domain metrics: admissions by outcome, reservations and settlements (counts and wallet units),
 * webhook delivery attempts by result, the run worker's runs, and the outbox backlog read from the database
 * when scraped (cached a few seconds; every instance reports the same shared backlog, so aggregate with
 * max()). The counters every call adds to are summed in plain numbers until a scrape (deferredCounter).
 * Built with the context (the CLI's counts go nowhere); the app registers them in its registry.
 */
export class EdgeMetrics {
  private readonly admissions = deferredCounter({ name: 'edge_admissions_total', help: 'E01 admissions by outcome (admitted, replayed, or the refusal code)', labelNames: ['outcome'], registers: [] });
  private readonly reservations = deferredCounter({ name: 'edge_reservations_total', help: 'Wallet reservations by run kind (async admission, sync call) and outcome (reserved, insufficient_balance, token_quota_exhausted)', labelNames: ['kind', 'outcome'], registers: [] });
  private readonly reservedUnits = deferredCounter({ name: 'edge_reserved_units_total', help: 'Wallet units reserved, by run kind', labelNames: ['kind'], registers: [] });
  private readonly settlements = deferredCounter({ name: 'edge_settlements_total', help: 'Run settlements by outcome (succeeded, failed, cancelled, already_settled, error) and source (worker, sync, cancel, expiry, reconcile)', labelNames: ['outcome', 'source'], registers: [] });
  private readonly settledUnits = deferredCounter({ name: 'edge_settlement_units_total', help: 'Wallet units of applied settlements by outcome and part (charged, released)', labelNames: ['outcome', 'part'], registers: [] });
  private readonly deliveries = new Counter({ name: 'edge_webhook_deliveries_total', help: 'Webhook delivery attempts by result (delivered; failed: retried later; dead: out of attempts; cancelled: endpoint removed)', labelNames: ['result'], registers: [] });
  private readonly taken = new Counter({ name: 'edge_run_worker_taken_total', help: 'Runs the run worker took', registers: [] });
  private readonly takeovers = new Counter({ name: 'edge_run_worker_takeovers_total', help: 'Runs the run worker took over from an earlier attempt (a worker whose lease ran out)', registers: [] });
  private readonly workerSettled = new Counter({ name: 'edge_run_worker_settled_total', help: "Runs the run worker ended, by settlement status (succeeded, failed, cancelled, already_settled, lost: its lease was taken over)", labelNames: ['status'], registers: [] });
  private readonly ledgerBatches = deferredCounter({ name: 'edge_ledger_batches_total', help: 'Ledger batches: transactions shared by concurrent reservations and settlements (runs/ledger.ts)', registers: [] });
  private readonly ledgerPieces = deferredCounter({ name: 'edge_ledger_pieces_total', help: 'Reservations and settlements written in ledger batches (pieces per batch: this over edge_ledger_batches_total)', registers: [] });
  private readonly workerRunning = new Gauge({ name: 'edge_run_worker_running', help: 'Runs the run worker of this instance is executing', registers: [] });
  private readonly outbox: Gauge[];
  private readonly cache = new RefreshingCache<'outbox', OutboxState>(OUTBOX_FRESH_MS, 2 * OUTBOX_FRESH_MS);
  private readonly admission = this.admissions.of;
  private readonly reservation = this.reservations.of;
  private readonly reserved = this.reservedUnits.of;
  private readonly settlement = this.settlements.of;
  private readonly units = this.settledUnits.of;
  private readonly batches = this.ledgerBatches.of();
  private readonly pieces = this.ledgerPieces.of();
  private readonly delivery = children(this.deliveries);
  private readonly ended = children(this.workerSettled);

  constructor(db: Kysely<EdgeDB>, log: Logger) {
    // The three gauges collect at once and share the cache's one read.
    const load = async (): Promise<OutboxState | null> => {
      try {
        return await this.cache.get('outbox', () => outboxState(db));
      } catch (e) {
        log.warn({ err: { message: (e as Error)?.message } }, 'metrics: outbox backlog not collected');
        return null;
      }
    };
    const gauge = (name: string, help: string, value: (s: OutboxState) => number): Gauge => {
      const g: Gauge = new Gauge({
        name,
        help,
        registers: [],
        collect: async () => {
          const s = await load();
          // NaN, not 0, while the database cannot be read: no backlog alert clears or fires on it.
          g.set(s ? value(s) : NaN);
        },
      });
      return g;
    };
    this.outbox = [
      gauge('edge_outbox_pending_deliveries', 'Webhook deliveries waiting to be sent (due or backing off), read from the database', (s) => s.pending),
      gauge('edge_outbox_oldest_pending_age_seconds', 'Age of the oldest pending webhook delivery (0 when none), read from the database', (s) => (s.oldestPendingMs === null ? 0 : Math.max(0, (Date.now() - s.oldestPendingMs) / 1000))),
      gauge('edge_webhook_dead_deliveries', 'Webhook deliveries that ran out of attempts (dead) and were not replayed, read from the database', (s) => s.dead),
    ];
  }

  /** Publishes every edge metric in the app's registry. */
  register(registry: Registry) {
    const deferred = [this.admissions, this.reservations, this.reservedUnits, this.settlements, this.settledUnits, this.ledgerBatches, this.ledgerPieces].map((d) => d.counter);
    const all: Metric[] = [...deferred, this.deliveries, this.taken, this.takeovers, this.workerSettled, this.workerRunning, ...this.outbox];
    for (const m of all) registry.registerMetric(m);
  }

  admitted(outcome: 'admitted' | 'replayed') {
    this.admission(outcome).inc();
  }

  /** A refused admission, by its code (the error catalog's: a fixed list); anything else is `error`. */
  admissionRefused(e: unknown) {
    this.admission(e instanceof AppError ? e.code : 'error').inc();
  }

  /** A ledger batch of `pieces` reservations and settlements, settled. */
  ledgerBatch(pieces: number) {
    this.batches.inc();
    this.pieces.inc(pieces);
  }

  reservedRun(kind: 'async' | 'sync', amount: number) {
    this.reservation(kind, 'reserved').inc();
    this.reserved(kind).inc(amount);
  }

  /** A reservation that failed for want of money in the wallet or on the token (other failures are the admission's or the call's). */
  reservationRefused(kind: 'async' | 'sync', e: unknown) {
    if (e instanceof AppError && (e.code === 'insufficient_balance' || e.code === 'token_quota_exhausted')) this.reservation(kind, e.code).inc();
  }

  settled(source: string, outcome: SettlementOutcome, reserved = 0, charged = 0) {
    this.settlement(outcome, source).inc();
    if (outcome === 'error' || outcome === 'already_settled') return;
    this.units(outcome, 'charged').inc(charged);
    this.units(outcome, 'released').inc(Math.max(0, reserved - charged));
  }

  delivered(result: 'delivered' | 'failed' | 'dead' | 'cancelled') {
    this.delivery(result).inc();
  }

  workerTook(takeover: boolean) {
    this.taken.inc();
    if (takeover) this.takeovers.inc();
    this.workerRunning.inc();
  }

  workerEnded(status: 'succeeded' | 'failed' | 'cancelled' | 'already_settled' | 'lost' | null) {
    if (status) this.ended(status).inc();
    this.workerRunning.dec();
  }
}

async function outboxState(db: Kysely<EdgeDB>): Promise<OutboxState> {
  const rows = await db
    .selectFrom('edge_deliveries')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('created_at').as('oldest')])
    .where('status', 'in', ['pending', 'dead'])
    .groupBy('status')
    .execute();
  const pending = rows.find((r) => r.status === 'pending');
  return { pending: Number(pending?.n ?? 0), oldestPendingMs: pending?.oldest == null ? null : Number(pending.oldest), dead: Number(rows.find((r) => r.status === 'dead')?.n ?? 0) };
}
