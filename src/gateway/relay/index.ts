import { createUpstreamClient } from '../../kit/upstream/client.js';
import type { AffinityService } from '../affinity/service.js';
import type { ChannelService } from '../channels/service.js';
import type { GatewayContext } from '../context.js';
import type { RatioSyncService } from '../ratio-sync/service.js';
import { RelayEngine } from './engine.js';
import { RelayLogWriter } from './log-writer.js';
import { Pricing } from './pricing.js';
import { Routing } from './routing.js';

/** Builds the relay of a gateway app: its own upstream client (relay deadlines and caps), routing view, pricing and log. */
export function createRelay(ctx: GatewayContext, s: { channels: ChannelService; affinity: AffinityService; ratios: RatioSyncService }) {
  const r = ctx.config.gateway.relay;
  const upstream = createUpstreamClient({
    policy: { allowPrivate: ctx.config.gateway.upstream.allowPrivate, allow: ctx.config.gateway.upstream.allow },
    timeoutMs: r.totalMs,
    maxBytes: r.maxResponseBytes,
  });
  const routing = new Routing(s.channels, r.routeCacheMs);
  const log = new RelayLogWriter(ctx.database, (deltas) => s.channels.addUsedQuota(deltas), ctx.log, r.logRetentionDays);
  const engine = new RelayEngine({
    ctx,
    upstream,
    routing,
    pricing: new Pricing({ ratios: () => s.ratios.current(), groupRatios: () => s.ratios.groupRatios() }, r.routeCacheMs),
    affinity: s.affinity,
    log,
    rules: ctx.config.gateway.channelTest,
    retries: ctx.config.gateway.retryTimes,
    limits: { firstByteMs: r.firstByteMs, idleMs: r.idleMs, totalMs: r.totalMs, maxResponseBytes: r.maxResponseBytes },
    allowUnpriced: r.allowUnpriced,
  });
  return {
    engine,
    log,
    routing,
    async close() {
      await log.close();
      await upstream.close();
    },
  };
}

export type Relay = ReturnType<typeof createRelay>;
