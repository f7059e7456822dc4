// Turns hourly usage buckets (AP13, AS16: one row per user, model and hour) into what the charts draw: one
// value per local day for the busiest models (the rest summed as "others"), and totals by model or user.
import type { UsageBucket } from '../../generated/account-api';
import { dayStart, UNITS_PER_USD } from '../format';

export type Metric = 'cost' | 'tokens' | 'calls';
export const METRICS: Metric[] = ['cost', 'tokens', 'calls'];
export const OTHERS = '\u0000others';
const MAX_LINES = 6;

export function metricOf(b: Pick<UsageBucket, 'quota' | 'token_used' | 'count'>, m: Metric): number {
  return m === 'cost' ? b.quota / UNITS_PER_USD : m === 'tokens' ? b.token_used : b.count;
}

/** Every local day from the day of `since` to the day of `until` (seconds). */
export function days(since: number, until: number): number[] {
  const out: number[] = [];
  for (let at = dayStart(since); at <= until; at = dayStart(at + 36 * 3600)) out.push(at);
  return out;
}

export interface DailySeries {
  times: number[];
  lines: Array<{ key: string; values: number[] }>;
}

export function dailyByModel(buckets: UsageBucket[], m: Metric, since: number, until: number): DailySeries {
  const times = days(since, until);
  const index = new Map(times.map((d, i) => [d, i]));
  const sums = new Map<string, number>();
  for (const b of buckets) sums.set(b.model_name, (sums.get(b.model_name) ?? 0) + metricOf(b, m));
  const ranked = [...sums].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  const shown = ranked.length > MAX_LINES ? ranked.slice(0, MAX_LINES - 1) : ranked;
  const lines = new Map<string, number[]>();
  for (const key of [...shown, ...(ranked.length > shown.length ? [OTHERS] : [])]) lines.set(key, times.map(() => 0));
  for (const b of buckets) {
    const i = index.get(dayStart(b.created_at));
    if (i === undefined) continue;
    lines.get(shown.includes(b.model_name) ? b.model_name : OTHERS)![i] += metricOf(b, m);
  }
  return { times, lines: [...lines].map(([key, values]) => ({ key, values })) };
}

export interface Total {
  key: string;
  calls: number;
  tokens: number;
  quota: number;
}

/** Totals per model or per user, the biggest spender first. */
export function totalsBy(buckets: UsageBucket[], by: 'model_name' | 'username'): Total[] {
  const map = new Map<string, Total>();
  for (const b of buckets) {
    const key = b[by] || String(b.user_id);
    const row = map.get(key) ?? { key, calls: 0, tokens: 0, quota: 0 };
    row.calls += b.count;
    row.tokens += b.token_used;
    row.quota += b.quota;
    map.set(key, row);
  }
  return [...map.values()].sort((a, b) => b.quota - a.quota || b.calls - a.calls);
}

export function grandTotal(buckets: UsageBucket[]): Total {
  const total: Total = { key: '', calls: 0, tokens: 0, quota: 0 };
  for (const b of buckets) {
    total.calls += b.count;
    total.tokens += b.token_used;
    total.quota += b.quota;
  }
  return total;
}
