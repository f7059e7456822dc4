import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { ByteBudget } from '../kit/upstream/budget.js';
import { Counter, Gauge, Histogram, type Metric, type Registry } from 'prom-client';
import { AppError } from '../kit/http/errors.js';
import { readOffThread } from '../kit/db/read-thread.js';
import { RefreshingCache } from '../kit/cache/refreshing-cache.js';
import { children } from '../kit/metrics/children.js';
import { STATUS } from './channels/types.js';
import type { GatewayDB } from './db.js';
import type { ProbeOutcome } from './upstream/probe.js';

/** The supplier calls made outside the relay, each through src/gateway/upstream. */
export type UpstreamCall = 'test' | 'models' | 'balance';

/** Failure kinds of an upstream call (bounded: never the upstream's own codes). */
const OUTCOME_OF_CODE: Record<string, string> = {
  UPSTREAM_BAD_STATUS: 'bad_status',
  UPSTREAM_BAD_RESPONSE: 'bad_response',
  UPSTREAM_TIMEOUT: 'timeout',
  UPSTREAM_UNREACHABLE: 'unreachable',
  UPSTREAM_BODY_TOO_LARGE: 'too_large',
  UPSTREAM_ADDRESS_REFUSED: 'refused',
  UPSTREAM_URL_INVALID: 'bad_url',
  UPSTREAM_NOT_SUPPORTED: 'not_supported',
};

/** The outcome label of a call that threw: the kind of an upstream failure, else `error`. */
export function outcomeOfError(e: unknown): string {
  return (e instanceof AppError && OUTCOME_OF_CODE[e.code]) || 'error';
}

/**
 * The outcome label of a channel test: `ok`, `bad_status` (a non-2xx answer), `bad_response` (a 2xx answer
 * that reports an error or is not what was asked), or the transport failure (probe.ts reports those as
 * do_request_failed with the AppError code first in its message).
 */
export function outcomeOfProbe(o: ProbeOutcome): string {
  if (o.ok) return 'ok';
  if (o.errorCode === 'do_request_failed') return OUTCOME_OF_CODE[o.message.slice(0, o.message.indexOf(':'))] ?? 'error';
  return o.status !== undefined && (o.status < 200 || o.status > 299) ? 'bad_status' : 'bad_response';
}

const STATUS_LABEL: Record<number, string> = { [STATUS.enabled]: 'enabled', [STATUS.manual]: 'manual_disabled', [STATUS.auto]: 'auto_disabled' };

/** How long a collected count is answered before the database is asked again (channel writes drop it earlier). */
const CHANNELS_FRESH_MS = 5_000;
/** Per-model counts scan the abilities index (millions of rows in a large installation): asked less often. */
const MODELS_FRESH_MS = 15_000;

/**
 * The gateway's domain metrics besides the relay's (relay/metrics.ts): supplier calls of channel tests,
 * balance queries and model lists by wire family and outcome, channel test durations, background jobs, and
 * two gauges read from the database when scraped (cached, shared by concurrent scrapes): channels by
 * status and enabled channels per model. Built with the context (the CLI's counts go nowhere); the app
 * registers them in its registry.
 */
export class GatewayMetrics {
  private readonly upstreamCalls = new Counter({
    name: 'gateway_upstream_calls_total',
    help: "Supplier calls outside the relay (channel tests, balance queries, model lists) by call, the channel type's wire family and outcome (ok, or the failure's kind)",
    labelNames: ['call', 'family', 'outcome'],
    registers: [],
  });
  private readonly testSeconds = new Histogram({
    name: 'gateway_channel_test_seconds',
    help: 'Channel test (G33, G34) duration by wire family and outcome',
    labelNames: ['family', 'outcome'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
    registers: [],
  });
  private readonly jobsStarted = new Counter({ name: 'gateway_jobs_started_total', help: 'Background jobs started by this instance, by type', labelNames: ['type'], registers: [] });
  private readonly jobsFinished = new Counter({ name: 'gateway_jobs_finished_total', help: 'Background jobs of this instance that ended, by type and status (succeeded, failed)', labelNames: ['type', 'status'], registers: [] });
  private readonly jobsRunning = new Gauge({ name: 'gateway_jobs_running', help: 'Background jobs running in this instance, by type', labelNames: ['type'], registers: [] });
  private readonly jobSeconds = new Histogram({ name: 'gateway_job_duration_seconds', help: 'Background job duration by type', labelNames: ['type'], buckets: [1, 5, 15, 60, 300, 900, 3600, 14400], registers: [] });
  private readonly channels: Gauge;
  private readonly models: Gauge;
  private readonly channelCache = new RefreshingCache<'channels', Map<string, number>>(CHANNELS_FRESH_MS, 2 * CHANNELS_FRESH_MS);
  private readonly modelCache = new RefreshingCache<'models', Map<string, number>>(MODELS_FRESH_MS, 2 * MODELS_FRESH_MS);
  private readonly call = children(this.upstreamCalls);
  private readonly test = children(this.testSeconds);
  private readonly started = children(this.jobsStarted);
  private readonly finished = children(this.jobsFinished);
  private readonly running = children(this.jobsRunning);
  private readonly duration = children(this.jobSeconds);

  private readonly buffered: Gauge;
  private readonly bufferRefusals: Gauge;

  constructor(db: Kysely<GatewayDB>, log: Logger, budget: ByteBudget) {
    const buffered: Gauge = (this.buffered = new Gauge({
      name: 'gateway_upstream_buffered_bytes',
      help: 'Bytes of whole upstream answers held in memory now, over every call (at most GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES)',
      registers: [],
      collect: () => buffered.set(budget.used),
    }));
    const refusals: Gauge = (this.bufferRefusals = new Gauge({
      name: 'gateway_upstream_buffer_refusals',
      help: 'Upstream answers refused since start because holding them would pass GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES',
      registers: [],
      collect: () => refusals.set(budget.refused),
    }));
    const collect = async (gauge: Gauge, what: string, load: () => Promise<Map<string, number>>) => {
      gauge.reset();
      try {
        for (const [label, n] of await load()) gauge.labels(label).set(n);
      } catch (e) {
        // A scrape still answers (without this gauge) while the database is away.
        log.warn({ err: { message: (e as Error)?.message } }, `metrics: ${what} not collected`);
      }
    };
    const channels: Gauge = (this.channels = new Gauge({
      name: 'gateway_channels',
      help: 'Channels by status (enabled, manual_disabled, auto_disabled), read from the database',
      labelNames: ['status'],
      registers: [],
      collect: () => collect(channels, 'channel counts', () => this.channelCache.get('channels', () => channelCounts(db))),
    }));
    const models: Gauge = (this.models = new Gauge({
      name: 'gateway_model_enabled_channels',
      help: 'Enabled channels serving each model that has abilities (0: every channel of the model is disabled), read from the database',
      labelNames: ['model'],
      registers: [],
      collect: () => collect(models, 'per-model channel counts', () => this.modelCache.get('models', () => enabledChannelsPerModel(db))),
    }));
  }

  /** Publishes every gateway metric in the app's registry. */
  register(registry: Registry) {
    const all: Metric[] = [this.upstreamCalls, this.testSeconds, this.jobsStarted, this.jobsFinished, this.jobsRunning, this.jobSeconds, this.channels, this.models, this.buffered, this.bufferRefusals];
    for (const m of all) registry.registerMetric(m);
  }

  /** A channel's status, models or groups changed here: the next scrape reads the counts again. */
  channelsChanged() {
    this.channelCache.clear();
    this.modelCache.clear();
  }

  upstreamCall(call: UpstreamCall, family: string, outcome: string) {
    this.call(call, family, outcome).inc();
  }

  /** One channel test: its supplier call and its duration. */
  channelTest(family: string, outcome: ProbeOutcome, seconds: number) {
    const label = outcomeOfProbe(outcome);
    this.call('test', family, label).inc();
    this.test(family, label).observe(seconds);
  }

  jobStarted(type: string) {
    this.started(type).inc();
    this.running(type).inc();
  }

  jobFinished(type: string, status: 'succeeded' | 'failed', seconds: number) {
    this.finished(type, status).inc();
    this.running(type).dec();
    this.duration(type).observe(seconds);
  }
}

/** Channels by status; the three statuses always present (0 when none). */
async function channelCounts(db: Kysely<GatewayDB>): Promise<Map<string, number>> {
  const rows = await db.selectFrom('channels').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
  const out = new Map(Object.values(STATUS_LABEL).map((l) => [l, 0]));
  for (const r of rows) {
    const label = STATUS_LABEL[Number(r.status)] ?? 'other';
    out.set(label, (out.get(label) ?? 0) + Number(r.n));
  }
  return out;
}

/** Distinct enabled channels per model of the abilities index (off the event loop on a SQLite file). */
async function enabledChannelsPerModel(db: Kysely<GatewayDB>): Promise<Map<string, number>> {
  const q = db
    .selectFrom('abilities')
    .select(['model', sql<number>`count(distinct case when enabled = 1 then channel_id end)`.as('n')])
    .groupBy('model');
  return new Map((await readOffThread(db, q)).map((r) => [r.model, Number(r.n)]));
}
