// How the channel pages write types, health figures, status reasons, test failures and the API's
// validation messages: names instead of ids, the operator's language instead of raw field names.
import { ApiError } from '../../shared/api';
import { lang } from '../../shared/i18n';
import { formatTime } from '../../shared/ui';
import { channelTypes, QUOTA_PER_USD } from '../../generated/gateway-api';
import { t } from '../texts';
import { hiddenType, NOT_RELAYED } from './not-relayed';

export const typeName = (id: number) => channelTypes[id]?.name ?? `#${id}`;

/**
 * Channel types by name (Unknown and the Dummy placeholders left out, unless `keep` is one of them: a stored
 * channel's own type stays selectable); types the relay cannot serve are marked.
 */
export function typeOptions(keep?: number): Array<[string, string]> {
  return Object.entries(channelTypes)
    .map(([id, v]) => [Number(id), v.name] as const)
    .filter(([id, name]) => !hiddenType(id, name) || id === keep)
    .sort((a, b) => a[1].localeCompare(b[1], 'en', { sensitivity: 'base' }))
    .map(([id, name]) => [String(id), NOT_RELAYED.has(id) ? t('type_not_relayed', { name }) : name]);
}

/** A JSON object stored as text (other_info, setting, settings); anything else reads as {}. */
export function jsonObject(text: unknown): Record<string, any> {
  if (typeof text !== 'string' || !text.trim()) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** The reason and time of the channel's last status change (other_info.status_reason / status_time). */
export function statusReason(c: { other_info?: unknown }): { reason: string; time: number } | null {
  const info = jsonObject(c.other_info);
  return typeof info.status_reason === 'string' && info.status_reason ? { reason: info.status_reason, time: Number(info.status_time) || 0 } : null;
}

/** Reasons the system writes, in the operator's language; an upstream's own words are kept as they are. */
export function describeReason(reason: string): string {
  let m = /^breaker: (\d+) failures within (\d+) s, the last ([\s\S]*)$/.exec(reason);
  if (m) return t('why_breaker', { n: m[1]!, w: m[2]!, last: m[3]! });
  if (reason === 'breaker: a probe succeeded') return t('why_probe_ok');
  m = /^quota limit (\d+(?:\.\d+)?) reached \(used (\d+(?:\.\d+)?)\)$/.exec(reason);
  if (m) return t('why_quota', { limit: quota(Number(m[1])), used: quota(Number(m[2])) });
  if (reason === 'manual operation') return t('why_manual');
  if (reason === 'All keys are disabled') return t('why_all_keys');
  if (reason === 'test passed') return t('why_test_passed');
  return reason;
}

/** Whether a reason was written by the system (breaker, budget, tests) rather than by a person. */
export const automaticReason = (reason: string) => reason !== 'manual operation';

/** Milliseconds as "850 ms" or "1.2 s". */
export function duration(ms: number | null | undefined): string {
  if (!ms) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** A speed class for a response time: fast under 1 s, slow from 3 s. */
export const speed = (ms: number) => (!ms ? '' : ms < 1000 ? 'fast' : ms < 3000 ? 'medium' : 'slow');

/** Quota units as dollars (500,000 units per USD), e.g. "$0.0004". */
export function quota(units: number | null | undefined): string {
  const usd = Number(units ?? 0) / QUOTA_PER_USD;
  if (!usd) return '$0';
  return '$' + (usd >= 1 ? usd.toFixed(2) : usd >= 0.01 ? usd.toFixed(3) : usd.toPrecision(2));
}

export function number(n: number, digits = 2): string {
  return n.toLocaleString(lang.value === 'zh' ? 'zh-CN' : 'en', { maximumFractionDigits: digits });
}

/** "3 min ago" style for recent times, the date beyond a day. */
export function ago(seconds: number | null | undefined): string {
  if (!seconds) return '—';
  const d = Math.max(0, Math.floor(Date.now() / 1000 - seconds));
  if (d < 60) return t('ago_now');
  if (d < 3600) return t('ago_min', { n: Math.floor(d / 60) });
  if (d < 86400) return t('ago_hour', { n: Math.floor(d / 3600) });
  return formatTime(seconds);
}

/** A test failure's code in words when the gateway knows it; otherwise null (the code is shown as it is). */
export function failureKind(code: string | null | undefined): string | null {
  if (!code) return null;
  const key = `fail_${code}`;
  const text = t(key);
  return text === key ? null : text;
}

/** Field names of the channel write API, as the forms label them. */
const FIELD_LABELS: Record<string, string> = {
  name: 'name',
  type: 'type',
  key: 'key',
  base_url: 'base_url',
  other: 'other',
  models: 'models',
  group: 'group',
  tag: 'tag',
  priority: 'priority',
  weight: 'weight',
  remark: 'remark',
  test_model: 'test_model',
  openai_organization: 'organization',
  model_mapping: 'model_mapping',
  status_code_mapping: 'status_code_mapping',
  param_override: 'param_override',
  header_override: 'header_override',
  setting: 'setting_json',
  settings: 'settings_json',
  auto_ban: 'auto_ban',
};

export const fieldText = (field: string) => t(`fl_${FIELD_LABELS[field] ?? field}`);

/**
 * The field an API validation message is about and the message in the operator's language: the catalog
 * message (CHANNEL_INVALID, INVALID_PARAMETERS) carries an English detail that starts with the field name.
 */
export function explain(error: unknown): { field: string | null; message: string; code: string | null } {
  if (!(error instanceof ApiError)) return { field: null, message: String((error as Error)?.message ?? error), code: null };
  const code = error.code !== 'HTTP_ERROR' ? error.code : null;
  if (error.code !== 'CHANNEL_INVALID' && error.code !== 'INVALID_PARAMETERS') return { field: null, message: error.message, code };
  const detail = error.message.replace(/^[^:：]*[:：]\s*/, '');
  const rules: Array<[RegExp, (m: RegExpExecArray) => [string, string]]> = [
    [/^(\w+) must be a JSON object$/, (m) => [m[1]!, t('v_json_object', { field: fieldText(m[1]!) })]],
    [/^weight must not be negative$/, () => ['weight', t('v_min', { field: fieldText('weight'), n: 0 })]],
    [/^base_url must be an http\(s\) URL$/, () => ['base_url', t('v_url', { field: fieldText('base_url') })]],
    [/^(\w+) is too long$/, (m) => [m[1]!, t('v_too_long', { field: fieldText(m[1]!) })]],
    [/^(name|tag|remark|group) is longer than (\d+) characters$/, (m) => [m[1]!, t('v_max_chars', { field: fieldText(m[1]!), n: m[2]! })]],
    [/^a model name is longer than (\d+) characters$/, (m) => ['models', t('v_model_name', { n: m[1]! })]],
    [/^a group name is longer than (\d+) characters$/, (m) => ['group', t('v_group_name', { n: m[1]! })]],
    [/^models × groups of a channel may not exceed (\d+)$/, (m) => ['models', t('v_abilities', { n: m[1]! })]],
    [/^VertexAI needs other/, () => ['other', t('v_vertex')]],
    [/^Codex key must be/, () => ['key', t('v_codex')]],
    [/^key is required$/, () => ['key', t('v_key_required')]],
    [/^at most (\d+) keys per batch$/, (m) => ['key', t('v_batch_keys', { n: m[1]! })]],
    [/^type must be an integer/, () => ['type', t('v_type')]],
    [/^(?:channel\.)?(\w+) must be integer$/, (m) => [m[1]!, t('v_integer', { field: fieldText(m[1]!) })]],
    [/^(?:channel\.)?(\w+) must be >= (-?\d+)$/, (m) => [m[1]!, t('v_min', { field: fieldText(m[1]!), n: m[2]! })]],
    [/^(?:channel\.)?(\w+) must be <= (-?\d+)$/, (m) => [m[1]!, t('v_max', { field: fieldText(m[1]!), n: m[2]! })]],
    [/^(?:channel\.)?(\w+) must NOT have more than (\d+) characters$/, (m) => [m[1]!, t('v_max_chars', { field: fieldText(m[1]!), n: m[2]! })]],
  ];
  for (const [re, f] of rules) {
    const m = re.exec(detail);
    if (m) {
      const [field, text] = f(m);
      return { field, message: t('v_prefix', { text }), code };
    }
  }
  return { field: null, message: error.message, code };
}

/**
 * What a failed channel test says: the upstream's message (G34 answers 200 with success false), the catalog
 * message of a test that could not run, or the failure's kind when the upstream gave no words.
 */
export function testMessage(error: unknown): string {
  if (error instanceof ApiError && error.status === 200 && /^HTTP \d+$/.test(error.message)) return failureKind(error.code) ?? error.code;
  return explain(error).message;
}
