import { Counter, type Registry } from 'prom-client';
import type { RelaySummary } from '../../contract/relay.js';
import { deferredCounter, type PendingCount } from '../../kit/metrics/deferred-counter.js';
import { deferredHistogram, type PendingHistogram } from '../../kit/metrics/deferred-histogram.js';

/** The counters and histograms one served call of a model, channel and outcome adds to. */
interface CallSet {
  calls: PendingCount;
  quota: PendingCount;
  prompt: PendingCount;
  completion: PendingCount;
  cached: PendingCount;
  reasoning: PendingCount;
  firstByte: PendingHistogram;
  total: PendingHistogram;
}

/**
 * The relay's Prometheus metrics: calls, tokens, cost and latency by model and channel, upstream attempts by
 * outcome, breaker transitions, and calls refused before any channel was tried. The per-call counters are
 * summed in plain numbers and handed to prom-client when it is scraped (its inc() hashes and validates the
 * labels every time, which cost more than the rest of the bookkeeping of a call), the latencies likewise counted
 * per bucket (kit/metrics/deferred-histogram.ts); label sets are resolved once and kept, since models and
 * channels are those the operator configured, so their number is bounded.
 */
export class RelayMetrics {
  private readonly calls;
  private readonly tokens;
  private readonly quota;
  private readonly attempts;
  private readonly latency;
  private readonly transitions: Counter<'to'>;
  private readonly refusals: Counter<'code' | 'group'>;
  private readonly rejectedRows: Counter;
  private readonly callSets = new Map<string, CallSet>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.calls = deferredCounter({ name: 'relay_calls_total', help: 'Relayed calls by model, serving channel and outcome (ok, or the error code)', labelNames: ['model', 'channel', 'outcome'], registers });
    this.tokens = deferredCounter({ name: 'relay_tokens_total', help: 'Tokens of relayed calls by model and kind (prompt, completion, cached, reasoning)', labelNames: ['model', 'kind'], registers });
    this.quota = deferredCounter({ name: 'relay_cost_quota_total', help: 'Cost of relayed calls in quota units (500,000 = 1 USD) by model and channel', labelNames: ['model', 'channel'], registers });
    this.latency = deferredHistogram({ name: 'relay_latency_seconds', help: 'Time to the first byte and to the end of relayed calls', labelNames: ['model', 'phase'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers });
    this.attempts = deferredCounter({ name: 'relay_upstream_attempts_total', help: 'Upstream attempts by channel and outcome (ok, or the failure code)', labelNames: ['channel', 'outcome'], registers });
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
      calls: this.calls.of(model, channel, outcome),
      quota: this.quota.of(model, channel),
      prompt: this.tokens.of(model, 'prompt'),
      completion: this.tokens.of(model, 'completion'),
      cached: this.tokens.of(model, 'cached'),
      reasoning: this.tokens.of(model, 'reasoning'),
      firstByte: this.latency.of(model, 'first_byte'),
      total: this.latency.of(model, 'total'),
    };
    this.callSets.set(key, set);
    return set;
  }

  observe(s: RelaySummary) {
    const set = this.callSetOf(s.model, s.channel_id === null ? '' : String(s.channel_id), s.error_code ?? 'ok');
    set.calls.inc();
    const u = s.usage;
    if (u.prompt_tokens > 0) set.prompt.inc(u.prompt_tokens);
    if (u.completion_tokens > 0) set.completion.inc(u.completion_tokens);
    if (u.cached_tokens > 0) set.cached.inc(u.cached_tokens);
    if (u.reasoning_tokens > 0) set.reasoning.inc(u.reasoning_tokens);
    if (s.quota > 0) set.quota.inc(s.quota);
    if (s.first_byte_ms !== null) set.firstByte.observe(s.first_byte_ms / 1000);
    set.total.observe(s.total_ms / 1000);
    for (const a of s.attempts) this.attempts.of(String(a.channel_id), a.error_code ?? 'ok').inc();
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
