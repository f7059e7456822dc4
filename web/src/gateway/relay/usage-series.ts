// Turns the usage buckets (one row per time bucket and model or channel) into aligned chart series: one
// x value per bucket of the range, empty buckets as zero, the busiest keys each on their own line and the
// rest summed as "others".
import { QUOTA_PER_USD } from '../../generated/gateway-api';
import { formatCount } from './format';
import type { UsageBucket } from './format';

export type Metric = 'calls' | 'errors' | 'tokens' | 'cost';
export const METRICS: Metric[] = ['calls', 'errors', 'tokens', 'cost'];
export const METRIC_TEXT: Record<Metric, string> = { calls: 'rl_calls', errors: 'rl_errors', tokens: 'rl_all_tokens', cost: 'rl_usd' };

/** The key of the line that sums every key beyond the busiest ones. */
export const OTHERS = '\u0000others';
const MAX_LINES = 6;

export function metricOf(b: UsageBucket, metric: Metric): number {
  if (metric === 'calls') return b.calls;
  if (metric === 'errors') return b.errors;
  if (metric === 'tokens') return b.prompt_tokens + b.completion_tokens;
  return b.quota / QUOTA_PER_USD;
}

export function formatMetric(metric: Metric, value: number) {
  if (metric !== 'cost') return formatCount(Math.round(value));
  return `$${value.toFixed(6)}`;
}

/** A short axis label: costs to three significant digits, counts as they are. */
export function formatAxis(metric: Metric, value: number) {
  if (metric !== 'cost') return formatCount(value);
  return value === 0 ? '$0' : `$${Number(value.toPrecision(3))}`;
}

export interface UsageSeries {
  /** Bucket starts, in seconds (uPlot's time scale). */
  times: number[];
  lines: Array<{ key: string; values: number[] }>;
}

/** Every bucket start from `since` up to `until` (ms), aligned as the server aligns them (epoch multiples). */
function bucketStarts(since: number, until: number, bucketMs: number): number[] {
  const out: number[] = [];
  for (let at = since - (since % bucketMs); at <= until; at += bucketMs) out.push(at);
  return out;
}

export function toSeries(buckets: UsageBucket[], metric: Metric, range: { since: number; until: number; bucketSeconds: number }): UsageSeries {
  const bucketMs = range.bucketSeconds * 1000;
  const starts = bucketStarts(range.since, range.until, bucketMs);
  const index = new Map(starts.map((at, i) => [at, i]));
  const sums = new Map<string, number>();
  for (const b of buckets) sums.set(b.key, (sums.get(b.key) ?? 0) + metricOf(b, metric));
  const ranked = [...sums].sort((a, b) => b[1] - a[1]).map(([key]) => key);
  const shown = ranked.length > MAX_LINES ? ranked.slice(0, MAX_LINES - 1) : ranked;
  const lineOf = (key: string) => (shown.includes(key) ? key : OTHERS);
  const lines = new Map<string, number[]>();
  for (const key of [...shown, ...(ranked.length > shown.length ? [OTHERS] : [])]) lines.set(key, starts.map(() => 0));
  for (const b of buckets) {
    const i = index.get(b.bucket);
    if (i === undefined) continue;
    lines.get(lineOf(b.key))![i] += metricOf(b, metric);
  }
  return { times: starts.map((at) => at / 1000), lines: [...lines].map(([key, values]) => ({ key, values })) };
}

export type Totals = Record<Metric, number>;

export function totalsOf(buckets: UsageBucket[]): Totals {
  const totals: Totals = { calls: 0, errors: 0, tokens: 0, cost: 0 };
  for (const b of buckets) for (const m of METRICS) totals[m] += metricOf(b, m);
  return totals;
}
