// Shapes of the relay log and usage answers, the page's filters, and how their values are written.
import { lang } from '../../shared/i18n';
import { t } from '../texts';

export interface RelayAttempt {
  channel_id: number | null;
  key_index: number | null;
  status: number;
  error_code: string | null;
  ms: number;
}

export interface RelayCall {
  id: number;
  created_at: number;
  request_id: string;
  caller: string;
  /** The caller's name where the gateway knows it (an edge owner when the edge runs in this process). */
  caller_name: string | null;
  caller_group: string;
  format: string;
  stream: number;
  model: string;
  upstream_model: string;
  channel_id: number | null;
  key_index: number | null;
  status: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  quota: number;
  cost: number;
  first_byte_ms: number | null;
  total_ms: number;
  retries: number;
  attempts: RelayAttempt[];
  /** 1 when the tokens were counted with the tokenizer (the upstream reported none it could be trusted for). */
  usage_counted: number;
  /** What went wrong, in full (the caller was told less). */
  error_detail: string | null;
}

export interface UsageBucket {
  bucket: number;
  key: string;
  calls: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  quota: number;
  avg_ms: number;
}

export type RangeName = '1h' | '24h' | '7d';
export const RANGES: Record<RangeName, { ms: number; bucketSeconds: number; bucketText: string }> = {
  '1h': { ms: 3600_000, bucketSeconds: 300, bucketText: 'rl_bucket_5m' },
  '24h': { ms: 86_400_000, bucketSeconds: 3600, bucketText: 'rl_bucket_1h' },
  '7d': { ms: 7 * 86_400_000, bucketSeconds: 21_600, bucketText: 'rl_bucket_6h' },
};

/** The filters applied to both the log and the chart; `since` (ms) is fixed when they are applied. */
export interface RelayFilters {
  model: string;
  channelId: string;
  status: '' | 'success' | 'error';
  caller: string;
  range: RangeName;
  since: number;
}

export function freshFilters(range: RangeName = '24h'): RelayFilters {
  return { model: '', channelId: '', status: '', caller: '', range, since: Date.now() - RANGES[range].ms };
}

const locale = () => (lang.value === 'zh' ? 'zh-CN' : 'en');

export function formatClock(ms: number) {
  return new Date(ms).toLocaleTimeString(locale());
}

export function formatDay(ms: number) {
  return new Date(ms).toLocaleDateString(locale());
}

export function formatCount(n: number) {
  return n.toLocaleString(locale());
}

/** US dollars with six decimals, as the log keeps them. */
export function formatUsd(usd: number) {
  return `$${usd.toFixed(6)}`;
}

export function formatMs(ms: number | null | undefined) {
  return ms === null || ms === undefined ? '—' : `${formatCount(ms)} ms`;
}

/** Time to the first byte and in all: "120 / 340 ms" (a call that never got an answer has no first byte). */
export function formatLatency(firstByteMs: number | null, totalMs: number) {
  return `${firstByteMs === null ? '—' : formatCount(firstByteMs)} / ${formatMs(totalMs)}`;
}

/** A channel by its name when known, else by its id. */
export function channelLabel(id: number | null, names: ReadonlyMap<number, string>) {
  if (id === null) return '—';
  const name = names.get(id);
  return name ? `${name} #${id}` : `#${id}`;
}

/** The kind of call ("chat · stream") under its model. */
export function callKind(call: RelayCall) {
  const format = t(`rl_format_${call.format}`);
  return call.stream ? `${format} · ${t('rl_stream')}` : format;
}
