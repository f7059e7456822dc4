import type { Config } from '../../config/index.js';
import type { Windows } from '../../kit/cache/windows.js';
import { jsonObject } from '../../kit/json/object.js';
import type { InFlight } from '../../kit/ratelimit/inflight.js';
import type { Actor } from '../audit/store.js';
import { setAutoStatus } from '../channels/auto-status.js';
import type { ChannelRow } from '../channels/store.js';
import { shouldDisable } from '../channel-tests/rules.js';
import type { GatewayContext } from '../context.js';
import type { ProbeOutcome } from '../upstream/probe.js';
import { REQUEST_ERRORS, type AttemptFailure } from './attempt.js';

const BREAKER: Actor = { id: 0, name: 'system:breaker' };
const TRIPS_WINDOW_SECONDS = 7 * 86_400;

/** A channel, or one key of a multi-key channel: what a breaker guards. */
export interface Guarded {
  row: ChannelRow;
  keyIndex: number | null;
}

export const guardId = (g: { row: { id: number }; keyIndex: number | null }) => (g.keyIndex === null ? `ch:${g.row.id}` : `key:${g.row.id}:${g.keyIndex}`);

type BreakerConfig = Config['gateway']['relay']['breaker'];

/**
 * The channel test's canned request sent to a channel (or key): null when it cannot be sent (the channel is
 * gone) or is no longer in the state asked about (`disabled`: by the system, half-open; else enabled).
 */
export type CannedProbe = (g: Guarded, disabled: boolean) => Promise<ProbeOutcome | null>;

/** Failures that say nothing about the channel: the request's own (400, 413, 422), one it cannot carry, the relay's own (a bug, a local limit). */
function channelFault(f: AttemptFailure): boolean {
  if (f.kind === 'internal' || f.kind === 'unsupported' || f.kind === 'local') return false;
  return !REQUEST_ERRORS.has(f.status);
}

/**
 * Circuit breakers of channels and keys, shared across instances through `windows` (Redis or this process):
 * closed → open when N counted failures fall within the window (or at once when the automatic-disable rules
 * say the credential is bad) → after a cooldown half-open, letting at most `probes` real requests through →
 * closed on a probe's success, open again with a doubled cooldown on its failure. Open is the channel's (or
 * key's) automatic disable (status 3, with its reason and time): the rules of G33/G34 and the relay share it,
 * and a channel that G33 disabled is probed like one the breaker opened. A manually disabled channel is never
 * probed. Retry-After keeps a channel or key out of use until then, without opening it.
 *
 * Callers' failures only raise the question: before a breaker opens (or reopens after a failed half-open
 * request) the channel test's canned request is sent to the channel or key, and only its failure opens it. A
 * passing probe says the failures were the callers' own (a prompt the upstream stalls on, content it refuses):
 * the count starts again and the channel stays in use, so no caller alone can take a shared channel away.
 * The request's own failures (400, 413, 422), requests a channel's format cannot carry and the relay's own
 * exceptions are never counted. docs/differences.md has the rule beside the reference's.
 */
export class Breaker {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly windows: Windows,
    private readonly probes: InFlight,
    private readonly onChange: () => void,
    private readonly probeChannel: CannedProbe,
  ) {}

  /** Told of every state change (the relay's metrics). */
  onTransition: ((to: 'open' | 'closed' | 'reopened') => void) | null = null;

  private get settings(): BreakerConfig {
    return this.ctx.config.gateway.relay.breaker;
  }

  /** The channel's own thresholds (its `settings` JSON) over the defaults. */
  private thresholds(row: Pick<ChannelRow, 'settings'>) {
    const s = jsonObject(row.settings);
    const pick = (name: string, def: number) => (typeof s[name] === 'number' && Number.isInteger(s[name]) && (s[name] as number) > 0 ? (s[name] as number) : def);
    return {
      failures: pick('breaker_failures', this.settings.failures),
      windowSeconds: pick('breaker_window_seconds', this.settings.windowSeconds),
      cooldownSeconds: pick('breaker_cooldown_seconds', this.settings.cooldownSeconds),
    };
  }

  cooldownMs(row: ChannelRow, trips: number): number {
    const base = this.thresholds(row).cooldownSeconds * 1000;
    return Math.min(this.settings.maxCooldownSeconds * 1000, base * 2 ** Math.max(0, trips - 1));
  }

  /** Whether a disabled channel's (or key's) first cooldown has passed since it was disabled at `disabledAt` (s). */
  cooledDown(row: Pick<ChannelRow, 'settings'>, disabledAt: number, now = Date.now()): boolean {
    return this.settings.enabled && now >= disabledAt * 1000 + this.thresholds(row).cooldownSeconds * 1000;
  }

  private counts(f: AttemptFailure): boolean {
    const kinds = this.settings.counts;
    if (f.kind !== 'http') return kinds.includes(f.kind);
    return kinds.includes(String(f.status)) || kinds.includes(`${Math.floor(f.status / 100)}xx`);
  }

  /** Ids (of `guardId`) that must not be used now: paused by Retry-After, or open and still cooling down. */
  async unusable(ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const blocked = await this.windows.blocked(ids.flatMap((id) => [`pause:${id}`, `open:${id}`]));
    return new Set(ids.filter((id) => blocked.has(`pause:${id}`) || blocked.has(`open:${id}`)));
  }

  /** A probe slot of a half-open channel or key; false when `probes` are already in flight. */
  tryProbe(g: Guarded): Promise<boolean> {
    return this.probes.acquire(`probe:${guardId(g)}`, this.settings.probes);
  }

  endProbe(g: Guarded): Promise<void> {
    return this.probes.release(`probe:${guardId(g)}`);
  }

  async failed(g: Guarded, f: AttemptFailure, probe: boolean): Promise<void> {
    const id = guardId(g);
    if (f.retryAfterMs !== null && f.retryAfterMs > 0) await this.windows.block(`pause:${id}`, Date.now() + Math.min(f.retryAfterMs, this.ctx.config.gateway.relay.retryAfterMaxSeconds * 1000));
    if (g.row.auto_ban !== 1 || !channelFault(f)) return;
    const rules = this.ctx.config.gateway.channelTest;
    const outcome = { ok: false as const, errorCode: f.upstreamCode ?? f.code, message: f.detail, ...(f.status ? { status: f.status } : {}) };
    const credential = shouldDisable(outcome, rules);
    const reason = `${outcome.errorCode}: ${f.detail}`.slice(0, 400);
    if (probe) {
      if (credential || this.counts(f)) this.confirm(g, id, reason, true);
      return;
    }
    if (credential) return this.confirm(g, id, reason, false);
    if (!this.settings.enabled || !this.counts(f)) return;
    const t = this.thresholds(g.row);
    const n = await this.windows.hit(`fail:${id}`, t.windowSeconds);
    if (n >= t.failures) this.confirm(g, id, `breaker: ${n} failures within ${t.windowSeconds} s, the last ${reason}`, false);
  }

  /**
   * In the background (the failed call goes on to the next channel): sends the canned probe, one at a time per
   * channel or key across instances. Its failure opens the breaker (or reopens a half-open one); its success
   * clears the failure count (and closes a half-open breaker). No answer at all opens nothing.
   */
  private confirm(g: Guarded, id: string, reason: string, halfOpen: boolean): void {
    const slot = `confirm:${id}`;
    const run = async () => {
      if (!(await this.probes.acquire(slot, 1))) return;
      try {
        // Calls in flight when the breaker opened (or Retry-After paused the channel) fail later: that asks nothing
        // of a channel already out of use, and an open one gets no traffic.
        if ((await this.unusable([id])).size) return;
        const outcome = await this.probeChannel(g, halfOpen);
        if (!outcome) return;
        if (outcome.ok) {
          await this.windows.clear(`fail:${id}`);
          if (halfOpen) await this.served(g, true);
          return;
        }
        const detail = `${reason}; the channel test failed too: ${outcome.errorCode}`.slice(0, 450);
        if (!halfOpen) return await this.trip(g, id, detail);
        await this.reopen(g, id);
        this.onTransition?.('reopened');
      } finally {
        await this.probes.release(slot);
      }
    };
    const done: Promise<void> = run()
      .catch((e) => this.ctx.log.warn({ err: { message: (e as Error).message }, channelId: g.row.id, keyIndex: g.keyIndex }, 'relay: breaker probe not completed'))
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  private readonly pending = new Set<Promise<unknown>>();

  /** Until the canned probes under way have decided (for tests: a probe runs after the call that asked for it). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** A served call: a probe's success closes its breaker (the channel or key is enabled again). */
  async served(g: Guarded, probe: boolean): Promise<void> {
    if (!probe) return;
    const id = guardId(g);
    if (await setAutoStatus(this.ctx, BREAKER, 'relay', { channelId: g.row.id, disable: false, reason: 'breaker: a probe succeeded', keyIndex: g.keyIndex })) {
      this.onTransition?.('closed');
      this.onChange();
    }
    await this.windows.clear(`trips:${id}`);
    await this.windows.clear(`fail:${id}`);
  }

  private async trip(g: Guarded, id: string, reason: string) {
    if (!(await setAutoStatus(this.ctx, BREAKER, 'relay', { channelId: g.row.id, disable: true, reason, keyIndex: g.keyIndex }))) return;
    await this.windows.clear(`fail:${id}`);
    await this.reopen(g, id);
    this.onTransition?.('open');
    this.onChange();
  }

  /** Open (again): cooling down for the cooldown of its trip count, doubled each time. */
  private async reopen(g: Guarded, id: string) {
    const trips = await this.windows.hit(`trips:${id}`, TRIPS_WINDOW_SECONDS);
    await this.windows.block(`open:${id}`, Date.now() + this.cooldownMs(g.row, trips));
  }
}
