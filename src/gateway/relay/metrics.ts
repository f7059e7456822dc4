import { Counter, Histogram, type Registry } from 'prom-client';
import type { RelaySummary } from '../../contract/relay.js';

/** A counter's value for one label set not yet added to it: prom-client hashes the labels on every inc(). */
interface Pending {
  labels: Record<string, string>;
  n: number;
}

/** The counters and histograms one served call of a model, channel and outcome adds to. */
interface CallSet {
  calls: Pending;
  quota: Pending;
  prompt: Pending;
  completion: Pending;
  cached: Pending;
  reasoning: Pending;
  firstByte: { observe(v: number): void };
  total: { observe(v: number): void };
}

/** A counter whose increments are summed per label set and added when it is read (a scrape). */
function deferredCounter<L extends string>(registry: Registry, config: { name: string; help: string; labelNames: L[] }) {
  const pending = new Map<string, Pending>();
  const counter = new Counter<L>({
    ...config,
    registers: [registry],
    collect() {
      for (const p of pending.values()) {
        if (p.n === 0) continue;
        this.inc(p.labels as Record<L, string>, p.n);
        p.n = 0;
      }
    },
  });
  return {
    counter,
    /** The pending value of a label set (kept: models and channels are those the operator configured); a series appears with its first non-zero value. */
    of(labels: Record<L, string>): Pending {
      const key = Object.values(labels).join('\u0000');
      let p = pending.get(key);
      if (!p) pending.set(key, (p = { labels, n: 0 }));
      return p;
    },
  };
}

/**
 * The relay's Prometheus metrics: calls, tokens, cost and latency by model and channel, upstream attempts by
 * outcome, breaker transitions, and calls refused before any channel was tried. The per-call counters are
 * summed in plain numbers and handed to prom-client when it is scraped (its inc() hashes and validates the
 * labels every time, which cost more than the rest of the bookkeeping of a call); label sets are resolved
 * once and kept, since models and channels are those the operator configured, so their number is bounded.
 */
export class RelayMetrics {
  private readonly calls;
  private readonly tokens;
  private readonly quota;
  private readonly attempts;
  private readonly latency: Histogram<'model' | 'phase'>;
  private readonly transitions: Counter<'to'>;
  private readonly refusals: Counter<'code' | 'group'>;
  private readonly rejectedRows: Counter;
  private readonly callSets = new Map<string, CallSet>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.calls = deferredCounter(registry, { name: 'relay_calls_total', help: 'Relayed calls by model, serving channel and outcome (ok, or the error code)', labelNames: ['model', 'channel', 'outcome'] });
    this.tokens = deferredCounter(registry, { name: 'relay_tokens_total', help: 'Tokens of relayed calls by model and kind (prompt, completion, cached, reasoning)', labelNames: ['model', 'kind'] });
    this.quota = deferredCounter(registry, { name: 'relay_cost_quota_total', help: 'Cost of relayed calls in quota units (500,000 = 1 USD) by model and channel', labelNames: ['model', 'channel'] });
    this.latency = new Histogram({ name: 'relay_latency_seconds', help: 'Time to the first byte and to the end of relayed calls', labelNames: ['model', 'phase'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers });
    this.attempts = deferredCounter(registry, { name: 'relay_upstream_attempts_total', help: 'Upstream attempts by channel and outcome (ok, or the failure code)', labelNames: ['channel', 'outcome'] });
    this.transitions = new Counter({ name: 'relay_breaker_transitions_total', help: 'Circuit breaker state changes of channels and keys (open, closed, reopened)', labelNames: ['to'], registers });
    // No model label: the model of a refused call is whatever the caller sent.
    this.rejectedRows = new Counter({ name: 'relay_log_rows_rejected_total', help: 'Relay log rows the database refused on their own, set aside (logged) instead of written', registers });
    this.refusals = new Counter({ name: 'relay_refused_total', help: 'Calls refused before any channel was tried, by code (relay_no_channel: no enabled channel serves the model in the group; relay_model_unpriced) and group', labelNames: ['code', 'group'], registers });
  }

  private callSetOf(model: string, channel: string, outcome: string): CallSet {
    const key = `${model}\u0000${channel}\u0000${outcome}`;
    let set = this.callSets.get(key);
    if (set) return set;
    set = {
      calls: this.calls.of({ model, channel, outcome }),
      quota: this.quota.of({ model, channel }),
      prompt: this.tokens.of({ model, kind: 'prompt' }),
      completion: this.tokens.of({ model, kind: 'completion' }),
      cached: this.tokens.of({ model, kind: 'cached' }),
      reasoning: this.tokens.of({ model, kind: 'reasoning' }),
      firstByte: this.latency.labels(model, 'first_byte'),
      total: this.latency.labels(model, 'total'),
    };
    this.callSets.set(key, set);
    return set;
  }

  observe(s: RelaySummary) {
    const set = this.callSetOf(s.model, s.channel_id === null ? '' : String(s.channel_id), s.error_code ?? 'ok');
    set.calls.n++;
    const u = s.usage;
    if (u.prompt_tokens > 0) set.prompt.n += u.prompt_tokens;
    if (u.completion_tokens > 0) set.completion.n += u.completion_tokens;
    if (u.cached_tokens > 0) set.cached.n += u.cached_tokens;
    if (u.reasoning_tokens > 0) set.reasoning.n += u.reasoning_tokens;
    if (s.quota > 0) set.quota.n += s.quota;
    if (s.first_byte_ms !== null) set.firstByte.observe(s.first_byte_ms / 1000);
    set.total.observe(s.total_ms / 1000);
    for (const a of s.attempts) this.attempts.of({ channel: String(a.channel_id), outcome: a.error_code ?? 'ok' }).n++;
  }

  transition(to: 'open' | 'closed' | 'reopened') {
    this.transitions.labels(to).inc();
  }

  rejectedLogRows(n: number) {
    this.rejectedRows.inc(n);
  }

  refused(code: string, group: string) {
    this.refusals.labels(code, group).inc();
  }
}
