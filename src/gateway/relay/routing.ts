import type { ChannelService } from '../channels/service.js';
import type { ChannelRow } from '../channels/store.js';
import { parseInfo, splitKeys, STATUS } from '../channels/types.js';
import { channelTarget, enabledKeyIndexes, type UpstreamTarget } from '../upstream/target.js';

interface Route {
  channelId: number;
  priority: number;
  weight: number;
}

/** An enabled channel as the relay uses it: its row, its keys' targets (built once), its key mode. */
export interface OpenChannel {
  row: ChannelRow;
  multiKey: boolean;
  mode: 'random' | 'polling';
  /** Indexes of the enabled keys (multi-key), or [0]. */
  keyIndexes: number[];
  target(keyIndex: number | null): UpstreamTarget;
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
    private readonly ttlMs: number,
  ) {}

  invalidate() {
    this.routes.clear();
    this.open.clear();
  }

  /**
   * The channels to try for one call, each once: highest priority first; inside a priority, a weighted random
   * order (a channel's chance to come first is its share of the tier's weight; weight 0 only after the rest).
   * `preferred` (the affinity's channel) goes first when it is a candidate.
   */
  async order(group: string, model: string, preferred: number | null): Promise<number[]> {
    const key = `${group}\u0000${model}`;
    let hit = this.routes.get(key);
    if (!hit || Date.now() - hit.at >= this.ttlMs) {
      const rows = await this.channels.routes(group, model);
      hit = { at: Date.now(), routes: rows.map((r) => ({ channelId: Number(r.channel_id), priority: Number(r.priority), weight: Number(r.weight) })) };
      this.routes.set(key, hit);
    }
    const ranked = hit.routes.map((r) => ({ id: r.channelId, priority: r.priority, rank: r.weight > 0 ? Math.random() ** (1 / r.weight) : Math.random() - 1 }));
    ranked.sort((a, b) => b.priority - a.priority || b.rank - a.rank);
    const ids = [...new Set(ranked.map((r) => r.id))];
    if (preferred !== null && ids.includes(preferred)) return [preferred, ...ids.filter((id) => id !== preferred)];
    return ids;
  }

  /** The channel if it is enabled and has an enabled key, with its keys opened; null otherwise. */
  async channel(id: number): Promise<OpenChannel | null> {
    const hit = this.open.get(id);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.channel;
    const found = await this.channels.openRow(id);
    const opened = found && found.row.status === STATUS.enabled ? openChannel(found.row, found.keyText) : null;
    const channel = opened && opened.keyIndexes.length > 0 ? opened : null;
    this.open.set(id, { at: Date.now(), channel });
    return channel;
  }

  /** The key a call uses: random or round-robin among the enabled keys; null for a single-key channel. */
  pickKey(c: OpenChannel): number | null {
    if (!c.multiKey) return null;
    if (c.mode === 'polling') {
      const turn = this.polling.get(c.row.id) ?? 0;
      this.polling.set(c.row.id, turn + 1);
      return c.keyIndexes[turn % c.keyIndexes.length]!;
    }
    return c.keyIndexes[Math.floor(Math.random() * c.keyIndexes.length)]!;
  }
}

function openChannel(row: ChannelRow, keyText: string): OpenChannel {
  const info = parseInfo(row.channel_info);
  const keyCount = info.is_multi_key ? splitKeys(keyText).length : 1;
  const targets = new Map<number, UpstreamTarget>();
  return {
    row,
    multiKey: info.is_multi_key,
    mode: info.multi_key_mode === 'polling' ? 'polling' : 'random',
    keyIndexes: info.is_multi_key ? enabledKeyIndexes(row, keyCount) : [0],
    target(keyIndex) {
      const i = keyIndex ?? 0;
      let t = targets.get(i);
      if (!t) targets.set(i, (t = channelTarget(row, keyText, keyIndex ?? undefined)));
      return t;
    },
  };
}
