import { jsonObject } from '../../kit/json/object.js';
import type { ChannelService } from '../channels/service.js';
import type { ChannelRow } from '../channels/store.js';
import { parseInfo, splitKeys, STATUS } from '../channels/types.js';
import { channelTarget, type UpstreamTarget } from '../upstream/target.js';
import type { Breaker } from './breaker.js';

interface Route {
  channelId: number;
  priority: number;
  weight: number;
  /** A channel the system disabled (status 3) and when (s): a probe candidate once cooled down. */
  disabledAt: number | null;
  settings: string;
}

/** A channel to try: `probe` when it is disabled by the system and its cooldown has passed (half-open). */
export interface Candidate {
  id: number;
  probe: boolean;
}

/** A channel as the relay uses it: its row, its keys' targets (built once), its key mode and its keys' states. */
export interface OpenChannel {
  row: ChannelRow;
  multiKey: boolean;
  mode: 'random' | 'polling';
  /** Indexes of the enabled keys (multi-key), or [0]. */
  keyIndexes: number[];
  /** Keys the system disabled, with when (s): probe candidates once cooled down. */
  dormantKeys: { index: number; disabledAt: number }[];
  target(keyIndex: number | null): UpstreamTarget;
}

const DORMANT_LIMIT = 16;

/** Whether the system disabled the channel (or, of a multi-key channel, the key): what a half-open breaker probes. */
export function isDormant(c: OpenChannel, keyIndex: number | null): boolean {
  return keyIndex === null ? c.row.status === STATUS.auto : c.dormantKeys.some((k) => k.index === keyIndex);
}

/**
 * The relay's view of the channels: candidates per (group, model) and opened channels, each re-read from the
 * database after `ttlMs` (other instances' changes show within that time) and dropped at once when this
 * instance changes a channel (`invalidate`).
 */
export class Routing {
  private routes = new Map<string, { at: number; routes: Route[] }>();
  private open = new Map<number, { at: number; channel: OpenChannel | null }>();
  private polling = new Map<number, number>();

  constructor(
    private readonly channels: ChannelService,
    private readonly breaker: Breaker,
    private readonly ttlMs: number,
  ) {}

  invalidate() {
    this.routes.clear();
    this.open.clear();
  }

  private async routesOf(group: string, model: string): Promise<Route[]> {
    const key = `${group}\u0000${model}`;
    const hit = this.routes.get(key);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.routes;
    const [active, dormant] = await Promise.all([this.channels.routes(group, model), this.channels.dormantRoutes(group, model)]);
    const routes: Route[] = [
      ...active.map((r) => ({ channelId: Number(r.channel_id), priority: Number(r.priority), weight: Number(r.weight), disabledAt: null, settings: '' })),
      ...dormant.slice(0, DORMANT_LIMIT).map((r) => ({ channelId: Number(r.channel_id), priority: Number(r.priority), weight: Number(r.weight), disabledAt: Number(jsonObject(r.other_info).status_time ?? 0), settings: r.settings })),
    ];
    this.routes.set(key, { at: Date.now(), routes });
    return routes;
  }

  /**
   * The channels to try for one call, each once: highest priority first; inside a priority, a half-open
   * channel first (its probe), then a weighted random order (a channel's chance to come first is its share
   * of the tier's weight; weight 0 only after the rest). `preferred` (the affinity's channel) goes first when
   * it is an enabled candidate.
   */
  async order(group: string, model: string, preferred: number | null): Promise<Candidate[]> {
    const now = Date.now();
    const ranked = (await this.routesOf(group, model))
      .filter((r) => r.disabledAt === null || this.breaker.cooledDown(r, r.disabledAt, now))
      .map((r) => ({ id: r.channelId, probe: r.disabledAt !== null, priority: r.priority, rank: r.disabledAt !== null ? 2 : r.weight > 0 ? Math.random() ** (1 / r.weight) : Math.random() - 1 }));
    ranked.sort((a, b) => b.priority - a.priority || b.rank - a.rank);
    const seen = new Set<number>();
    const out: Candidate[] = [];
    for (const r of ranked) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      out.push({ id: r.id, probe: r.probe });
    }
    const first = preferred === null ? -1 : out.findIndex((c) => c.id === preferred && !c.probe);
    if (first > 0) out.unshift(...out.splice(first, 1));
    return out;
  }

  /** The channel with its keys opened, if it is enabled (or, for a probe, disabled by the system); else null. */
  async channel(id: number, probe = false): Promise<OpenChannel | null> {
    let hit = this.open.get(id);
    if (!hit || Date.now() - hit.at >= this.ttlMs) {
      const found = await this.channels.openRow(id);
      hit = { at: Date.now(), channel: found && found.row.status !== STATUS.manual ? openChannel(found.row, found.keyText) : null };
      this.open.set(id, hit);
    }
    const c = hit.channel;
    if (!c) return null;
    if (c.row.status === STATUS.enabled) return c.keyIndexes.length > 0 || c.dormantKeys.length > 0 ? c : null;
    return probe ? c : null;
  }

  /** An enabled key: random or round-robin among `usable`; null for a single-key channel, -1 when none is usable. */
  pickKey(c: OpenChannel, usable: number[]): number | null {
    if (!c.multiKey) return null;
    if (!usable.length) return -1;
    if (c.mode === 'polling') {
      const turn = this.polling.get(c.row.id) ?? 0;
      this.polling.set(c.row.id, turn + 1);
      return usable[turn % usable.length]!;
    }
    return usable[Math.floor(Math.random() * usable.length)]!;
  }
}

function openChannel(row: ChannelRow, keyText: string): OpenChannel {
  const info = parseInfo(row.channel_info);
  const keyCount = info.is_multi_key ? splitKeys(keyText).length : 1;
  const targets = new Map<number, UpstreamTarget>();
  const keyIndexes: number[] = [];
  const dormantKeys: { index: number; disabledAt: number }[] = [];
  for (let i = 0; i < (info.is_multi_key ? keyCount : 0); i++) {
    const s = info.multi_key_status_list[i] ?? STATUS.enabled;
    if (s === STATUS.enabled) keyIndexes.push(i);
    else if (s === STATUS.auto) dormantKeys.push({ index: i, disabledAt: Number(info.multi_key_disabled_time[i] ?? 0) });
  }
  return {
    row,
    multiKey: info.is_multi_key,
    mode: info.multi_key_mode === 'polling' ? 'polling' : 'random',
    keyIndexes: info.is_multi_key ? keyIndexes : [0],
    dormantKeys,
    target(keyIndex) {
      const i = keyIndex ?? 0;
      let t = targets.get(i);
      if (!t) targets.set(i, (t = channelTarget(row, keyText, keyIndex ?? undefined)));
      return t;
    },
  };
}
