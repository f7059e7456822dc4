import type { Runtime } from '../../runtime.js';
import { memoryWindows, redisWindows } from '../../kit/cache/windows.js';
import { jsonObject } from '../../kit/json/object.js';
import { memoryInFlight, redisInFlight } from '../../kit/ratelimit/inflight.js';
import { createUpstreamClient } from '../../kit/upstream/client.js';
import type { AffinityService } from '../affinity/service.js';
import type { ChannelService } from '../channels/service.js';
import type { ChannelTestService } from '../channel-tests/service.js';
import { STATUS } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import type { RatioSyncService } from '../ratio-sync/service.js';
import type { Registry } from 'prom-client';
import { Breaker, type CannedProbe } from './breaker.js';
import { RelayMetrics } from './metrics.js';
import { RelayEngine } from './engine.js';
import { RelayLogWriter } from './log-writer.js';
import { Pricing } from './pricing.js';
import { isDormant, Routing, type OpenChannel } from './routing.js';

const BUDGET_ACTOR = { id: 0, name: 'system:budget' };

/**
 * Builds the relay of a gateway app: its own upstream client (relay deadlines and caps), breakers (shared
 * through Redis when configured), routing view, pricing and log.
 */
export function createRelay(ctx: GatewayContext, s: { channels: ChannelService; affinity: AffinityService; ratios: RatioSyncService; tests: ChannelTestService }, runtime?: Pick<Runtime, 'redis'>) {
  const r = ctx.config.gateway.relay;
  const upstream = createUpstreamClient({
    policy: { allowPrivate: ctx.config.gateway.upstream.allowPrivate, allow: ctx.config.gateway.upstream.allow },
    timeoutMs: r.totalMs,
    maxBytes: r.maxResponseBytes,
    budget: ctx.upstreamBudget,
  });
  const prefix = `${ctx.config.redisKeyPrefix}gateway:${ctx.installationId}:breaker:`;
  const windows = runtime?.redis ? redisWindows(runtime.redis, prefix) : memoryWindows();
  const probes = runtime?.redis ? redisInFlight(runtime.redis, `${prefix}probe:`, 300) : memoryInFlight();
  let routing: Routing;
  /** The channel test's request (G34's) to one channel or key: what decides whether callers' failures are the channel's. */
  const probeChannel: CannedProbe = async (g, disabled) => {
    const c = await routing.channel(g.row.id, true);
    return c && isDormant(c, g.keyIndex) === disabled ? (await s.tests.run(c.target(g.keyIndex), {})).outcome : null;
  };
  const breaker = new Breaker(ctx, windows, probes, () => routing.invalidate(), probeChannel);
  routing = new Routing(s.channels, breaker, r.routeCacheMs);
  const log = new RelayLogWriter(ctx.database, (deltas) => s.channels.addUsedQuota(deltas), ctx.log, r.logRetentionDays);

  /** A channel whose `settings.quota_limit` its used quota has reached is disabled (by hand to re-enable). */
  async function spent(c: OpenChannel): Promise<boolean> {
    const limit = jsonObject(c.row.settings).quota_limit;
    if (typeof limit !== 'number' || !(limit > 0)) return false;
    const used = Number(c.row.used_quota) + log.pendingQuota(c.row.id);
    if (used < limit) return false;
    await s.channels.setStatus(BUDGET_ACTOR, 'relay', [c.row.id], STATUS.manual, { quota_limit: limit, used_quota: used }, `quota limit ${limit} reached (used ${used})`);
    routing.invalidate();
    return true;
  }

  const pricing = new Pricing({ ratios: () => s.ratios.current(), groupRatios: () => s.ratios.groupRatios() }, r.routeCacheMs);
  // A ratio change in this process (GS17, the CLI, tests) prices the next call; other instances within routeCacheMs.
  s.ratios.onChange(() => pricing.invalidate());
  const engine = new RelayEngine({
    ctx,
    upstream,
    routing,
    breaker,
    pricing,
    affinity: s.affinity,
    log,
    retries: ctx.config.gateway.retryTimes,
    limits: { firstByteMs: r.firstByteMs, idleMs: r.idleMs, totalMs: r.totalMs, maxResponseBytes: r.maxResponseBytes },
    backoff: { baseMs: r.backoffMs, maxMs: r.backoffMaxMs },
    allowUnpriced: r.allowUnpriced,
    defaultMaxTokens: r.defaultMaxTokens,
    spent,
  });
  return {
    engine,
    log,
    routing,
    breaker,
    /** Publishes the relay's metrics in the app's registry. */
    instrument(registry: Registry) {
      const metrics = new RelayMetrics(registry);
      log.observer = (summary) => metrics.observe(summary);
      log.onRejected = (rows) => metrics.rejectedLogRows(rows);
      breaker.onTransition = (to) => metrics.transition(to);
      engine.onRefused = (code, group) => metrics.refused(code, group);
    },
    async close() {
      await log.close();
      await upstream.close();
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;
