import type { Breaker, Guarded } from './breaker.js';
import { guardId } from './breaker.js';
import type { GatewayContext } from '../context.js';
import type { OpenChannel, Routing } from './routing.js';
import { relayProviderOf } from '../providers/index.js';
import type { RelayProvider } from '../providers/types.js';

/** One attempt's channel, key and model; `probe` is the half-open breaker it tests, if it is a probe. */
export interface Leg {
  channel: OpenChannel;
  keyIndex: number | null;
  probe: Guarded | null;
  provider: RelayProvider;
  upstreamModel: string;
  startedAt: number;
}

export interface LegSource {
  ctx: Pick<GatewayContext, 'log'>;
  routing: Routing;
  breaker: Breaker;
  /** Whether a channel has spent its budget (and was disabled for it): it is skipped. */
  spent(c: OpenChannel): Promise<boolean>;
}

/** Failures that belong to a key rather than its channel: another key of the channel may well answer. */
const KEY_FAILURES = new Set([401, 403, 429]);

/**
 * The channels (and keys) one call may try, in order, each at most once: the routing order without
 * channels paused by Retry-After or cooling down; a half-open channel or key only when a probe slot is free
 * (the caller releases it after the attempt with `breaker.endProbe(leg.probe)`). The caller passes a
 * failed attempt's HTTP status to `next()`: after a key's own failure (401, 403, 429) another key of the
 * same multi-key channel is tried before the next channel.
 */
export async function* legsOf(s: LegSource, group: string, model: string, preferred: number | null, onlyPreferred: boolean): AsyncGenerator<Leg, void, number | undefined> {
  let candidates = await s.routing.order(group, model, preferred);
  if (onlyPreferred && preferred !== null && candidates[0]?.id === preferred) candidates = candidates.slice(0, 1);
  const unusable = await s.breaker.unusable(candidates.map((c) => `ch:${c.id}`));
  let attempted = false;
  for (const c of candidates) {
    if (unusable.has(`ch:${c.id}`)) continue;
    // Earlier attempts took time: a Retry-After pause or an opened breaker set since (by any call) holds.
    if (attempted && (await s.breaker.unusable([`ch:${c.id}`])).size) continue;
    const channel = await s.routing.channel(c.id, c.probe);
    if (!channel || (await s.spent(channel))) continue;
    const provider = relayProviderOf(channel.row.type);
    if (!provider) {
      s.ctx.log.warn({ channelId: channel.row.id, type: channel.row.type }, 'relay: channel skipped, the relay does not speak its type');
      continue;
    }
    const tried = new Set<number>();
    for (;;) {
      const pick = await keyOf(s, channel, c.probe, tried);
      if (!pick) break;
      const target = channel.target(pick.keyIndex);
      attempted = true;
      const failedWith = yield { channel, keyIndex: pick.keyIndex, probe: pick.probe, provider, upstreamModel: target.modelMapping[model] ?? model, startedAt: performance.now() };
      if (pick.keyIndex === null || failedWith === undefined || !KEY_FAILURES.has(failedWith)) break;
      tried.add(pick.keyIndex);
    }
  }
}

/** The key of one attempt: a half-open key when one may be probed, else an enabled key that is not paused. */
async function keyOf(s: LegSource, c: OpenChannel, channelProbe: boolean, tried: Set<number>): Promise<{ keyIndex: number | null; probe: Guarded | null } | null> {
  if (!c.multiKey) {
    const guard: Guarded = { row: c.row, keyIndex: null };
    if (channelProbe && !(await s.breaker.tryProbe(guard))) return null;
    return { keyIndex: null, probe: channelProbe ? guard : null };
  }
  const now = Date.now();
  const dormant = c.dormantKeys.filter((k) => s.breaker.cooledDown(c.row, k.disabledAt, now)).map((k) => k.index);
  const unusable = await s.breaker.unusable([...c.keyIndexes, ...dormant].map((i) => guardId({ row: c.row, keyIndex: i })));
  const usable = (i: number) => !tried.has(i) && !unusable.has(guardId({ row: c.row, keyIndex: i }));
  for (const index of dormant.filter(usable)) {
    const guard: Guarded = { row: c.row, keyIndex: index };
    if (await s.breaker.tryProbe(guard)) return { keyIndex: index, probe: guard };
  }
  const keyIndex = s.routing.pickKey(c, c.keyIndexes.filter(usable));
  return keyIndex === -1 ? null : { keyIndex, probe: null };
}
