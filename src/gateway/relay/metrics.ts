import { Counter, Histogram, type Registry } from 'prom-client';
import type { RelaySummary } from '../../contract/relay.js';

/**
 * The relay's Prometheus metrics: calls, tokens, cost and latency by model and channel, upstream attempts by
 * outcome, breaker transitions, and calls refused before any channel was tried. Label sets are resolved once and kept (prom-client hashes them on every
 * call otherwise); models and channels are those the operator configured, so their number is bounded.
 */
export class RelayMetrics {
  private readonly calls: Counter<'model' | 'channel' | 'outcome'>;
  private readonly tokens: Counter<'model' | 'kind'>;
  private readonly quota: Counter<'model' | 'channel'>;
  private readonly latency: Histogram<'model' | 'phase'>;
  private readonly attempts: Counter<'channel' | 'outcome'>;
  private readonly transitions: Counter<'to'>;
  private readonly refusals: Counter<'code' | 'group'>;
  private readonly rejectedRows: Counter;
  private readonly cached = new Map<string, { inc(n?: number): void }>();
  private readonly latencies = new Map<string, { firstByte: { observe(v: number): void }; total: { observe(v: number): void } }>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.calls = new Counter({ name: 'relay_calls_total', help: 'Relayed calls by model, serving channel and outcome (ok, or the error code)', labelNames: ['model', 'channel', 'outcome'], registers });
    this.tokens = new Counter({ name: 'relay_tokens_total', help: 'Tokens of relayed calls by model and kind (prompt, completion, cached, reasoning)', labelNames: ['model', 'kind'], registers });
    this.quota = new Counter({ name: 'relay_cost_quota_total', help: 'Cost of relayed calls in quota units (500,000 = 1 USD) by model and channel', labelNames: ['model', 'channel'], registers });
    this.latency = new Histogram({ name: 'relay_latency_seconds', help: 'Time to the first byte and to the end of relayed calls', labelNames: ['model', 'phase'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers });
    this.attempts = new Counter({ name: 'relay_upstream_attempts_total', help: 'Upstream attempts by channel and outcome (ok, or the failure code)', labelNames: ['channel', 'outcome'], registers });
    this.transitions = new Counter({ name: 'relay_breaker_transitions_total', help: 'Circuit breaker state changes of channels and keys (open, closed, reopened)', labelNames: ['to'], registers });
    // No model label: the model of a refused call is whatever the caller sent.
    this.rejectedRows = new Counter({ name: 'relay_log_rows_rejected_total', help: 'Relay log rows the database refused on their own, set aside (logged) instead of written', registers });
    this.refusals = new Counter({ name: 'relay_refused_total', help: 'Calls refused before any channel was tried, by code (relay_no_channel: no enabled channel serves the model in the group; relay_model_unpriced) and group', labelNames: ['code', 'group'], registers });
  }

  private counter<L extends string>(c: Counter<L>, labels: Record<L, string>) {
    const key = `${(c as unknown as { name: string }).name}\u0000${Object.values(labels).join('\u0000')}`;
    let hit = this.cached.get(key);
    if (!hit) this.cached.set(key, (hit = c.labels(labels)));
    return hit;
  }

  private latencyOf(model: string) {
    let hit = this.latencies.get(model);
    if (!hit) this.latencies.set(model, (hit = { firstByte: this.latency.labels(model, 'first_byte'), total: this.latency.labels(model, 'total') }));
    return hit;
  }

  observe(s: RelaySummary) {
    const channel = s.channel_id === null ? '' : String(s.channel_id);
    this.counter(this.calls, { model: s.model, channel, outcome: s.error_code ?? 'ok' }).inc();
    for (const kind of ['prompt', 'completion', 'cached', 'reasoning'] as const) {
      const n = s.usage[`${kind}_tokens`];
      if (n > 0) this.counter(this.tokens, { model: s.model, kind }).inc(n);
    }
    if (s.quota > 0) this.counter(this.quota, { model: s.model, channel }).inc(s.quota);
    const latency = this.latencyOf(s.model);
    if (s.first_byte_ms !== null) latency.firstByte.observe(s.first_byte_ms / 1000);
    latency.total.observe(s.total_ms / 1000);
    for (const a of s.attempts) this.counter(this.attempts, { channel: String(a.channel_id), outcome: a.error_code ?? 'ok' }).inc();
  }

  transition(to: 'open' | 'closed' | 'reopened') {
    this.counter(this.transitions, { to }).inc();
  }

  rejectedLogRows(n: number) {
    this.rejectedRows.inc(n);
  }

  refused(code: string, group: string) {
    this.counter(this.refusals, { code, group }).inc();
  }
}
