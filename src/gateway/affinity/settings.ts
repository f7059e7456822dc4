import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';

/** Where an affinity value comes from; the first non-empty source of a rule wins (the reference's types). */
export interface KeySource {
  type: 'context_int' | 'context_string' | 'request_header' | 'gjson';
  /** Context key or header name. */
  key?: string;
  /** Dotted JSON path into the request body (gjson). */
  path?: string;
}

export interface AffinityRule {
  name: string;
  model_regex: string[];
  path_regex: string[];
  user_agent_include: string[];
  key_sources: KeySource[];
  value_regex: string;
  ttl_seconds: number;
  skip_retry_on_failure: boolean;
  include_using_group: boolean;
  include_model_name: boolean;
  include_rule_name: boolean;
}

export interface AffinitySettings {
  enabled: boolean;
  switch_on_success: boolean;
  keep_on_channel_disabled: boolean;
  max_entries: number;
  default_ttl_seconds: number;
  rules: AffinityRule[];
}

export const OPTION_KEY = 'option:channel_affinity_setting';

export const DEFAULT_SETTINGS: AffinitySettings = { enabled: false, switch_on_success: true, keep_on_channel_disabled: false, max_entries: 100_000, default_ttl_seconds: 3600, rules: [] };

function invalid(detail: string): never {
  throw new AppError('AFFINITY_SETTINGS_INVALID', { params: { detail } });
}

function strings(v: unknown, what: string, max = 32): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > max || v.some((x) => typeof x !== 'string' || x.length > 512)) invalid(`${what} must be a list of at most ${max} strings`);
  return v as string[];
}

function regexes(v: unknown, what: string): string[] {
  const list = strings(v, what);
  for (const r of list) {
    try {
      new RegExp(r);
    } catch {
      invalid(`${what}: "${r.slice(0, 60)}" is not a regular expression`);
    }
  }
  return list;
}

const bool = (v: unknown, def: boolean, what: string) => (v === undefined ? def : typeof v === 'boolean' ? v : invalid(`${what} must be true or false`));

function int(v: unknown, def: number, min: number, max: number, what: string): number {
  if (v === undefined) return def;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) invalid(`${what} must be an integer from ${min} to ${max}`);
  return v;
}

/** Validates settings given as JSON (file, CLI or option row) into their full form with defaults. */
export function parseSettings(input: unknown): AffinitySettings {
  if (!input || typeof input !== 'object' || Array.isArray(input)) invalid('settings must be a JSON object');
  const s = input as Record<string, unknown>;
  const rulesIn = s.rules === undefined ? [] : s.rules;
  if (!Array.isArray(rulesIn) || rulesIn.length > 100) invalid('rules must be a list of at most 100 rules');
  const defaultTtl = int(s.default_ttl_seconds, DEFAULT_SETTINGS.default_ttl_seconds, 1, 30 * 86400, 'default_ttl_seconds');
  const names = new Set<string>();
  const rules = rulesIn.map((raw, i): AffinityRule => {
    if (!raw || typeof raw !== 'object') invalid(`rules[${i}] must be an object`);
    const r = raw as Record<string, unknown>;
    if (typeof r.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(r.name)) invalid(`rules[${i}].name must be 1-64 letters, digits, _ . or -`);
    if (names.has(r.name)) invalid(`rule name "${r.name}" is used twice`);
    names.add(r.name);
    const sources = r.key_sources === undefined ? [] : r.key_sources;
    if (!Array.isArray(sources) || sources.length === 0 || sources.length > 16) invalid(`rules[${i}].key_sources must list 1 to 16 sources`);
    const key_sources = sources.map((k, j): KeySource => {
      const src = k as Record<string, unknown>;
      if (!['context_int', 'context_string', 'request_header', 'gjson'].includes(String(src?.type))) invalid(`rules[${i}].key_sources[${j}].type is unknown`);
      const field = src.type === 'gjson' ? src.path : src.key;
      if (typeof field !== 'string' || !field || field.length > 256) invalid(`rules[${i}].key_sources[${j}] needs its ${src.type === 'gjson' ? 'path' : 'key'}`);
      return src.type === 'gjson' ? { type: 'gjson', path: field } : { type: src.type as KeySource['type'], key: field };
    });
    const valueRegex = typeof r.value_regex === 'string' ? r.value_regex : '';
    regexes(valueRegex ? [valueRegex] : [], `rules[${i}].value_regex`);
    return {
      name: r.name,
      model_regex: regexes(r.model_regex, `rules[${i}].model_regex`),
      path_regex: regexes(r.path_regex, `rules[${i}].path_regex`),
      user_agent_include: strings(r.user_agent_include, `rules[${i}].user_agent_include`),
      key_sources,
      value_regex: valueRegex,
      ttl_seconds: int(r.ttl_seconds, defaultTtl, 1, 30 * 86400, `rules[${i}].ttl_seconds`),
      skip_retry_on_failure: bool(r.skip_retry_on_failure, false, `rules[${i}].skip_retry_on_failure`),
      include_using_group: bool(r.include_using_group, true, `rules[${i}].include_using_group`),
      include_model_name: bool(r.include_model_name, true, `rules[${i}].include_model_name`),
      include_rule_name: bool(r.include_rule_name, true, `rules[${i}].include_rule_name`),
    };
  });
  return {
    enabled: bool(s.enabled, DEFAULT_SETTINGS.enabled, 'enabled'),
    switch_on_success: bool(s.switch_on_success, DEFAULT_SETTINGS.switch_on_success, 'switch_on_success'),
    keep_on_channel_disabled: bool(s.keep_on_channel_disabled, DEFAULT_SETTINGS.keep_on_channel_disabled, 'keep_on_channel_disabled'),
    max_entries: int(s.max_entries, DEFAULT_SETTINGS.max_entries, 1, 10_000_000, 'max_entries'),
    default_ttl_seconds: defaultTtl,
    rules,
  };
}

export async function loadSettings(ctx: GatewayContext): Promise<AffinitySettings> {
  const row = await ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', OPTION_KEY).executeTakeFirst();
  if (!row) return DEFAULT_SETTINGS;
  return parseSettings(JSON.parse(row.value));
}

export async function saveSettings(ctx: GatewayContext, settings: AffinitySettings) {
  const value = JSON.stringify(settings);
  await ctx.db.insertInto('gateway_meta').values({ key: OPTION_KEY, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}
