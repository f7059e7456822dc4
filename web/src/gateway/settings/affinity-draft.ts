// The channel-affinity settings as the form edits them (lists as lines, numbers as typed text) and back.

export type SourceType = 'context_int' | 'context_string' | 'request_header' | 'gjson';
export const SOURCE_TYPES: SourceType[] = ['gjson', 'request_header', 'context_string', 'context_int'];
export const RULE_FLAGS = ['skip_retry_on_failure', 'include_using_group', 'include_model_name', 'include_rule_name'] as const;
type Flag = (typeof RULE_FLAGS)[number];

export interface KeySource {
  type: SourceType;
  key?: string;
  path?: string;
}

export interface Rule extends Record<Flag, boolean> {
  name: string;
  model_regex: string[];
  path_regex: string[];
  user_agent_include: string[];
  key_sources: KeySource[];
  value_regex: string;
  ttl_seconds: number;
}

export interface Settings {
  enabled: boolean;
  switch_on_success: boolean;
  keep_on_channel_disabled: boolean;
  max_entries: number;
  default_ttl_seconds: number;
  rules: Rule[];
}

export interface RuleDraft extends Record<Flag, boolean> {
  /** Stable key for the list while names are edited. */
  uid: number;
  name: string;
  model_regex: string;
  path_regex: string;
  user_agent_include: string;
  key_sources: { type: SourceType; value: string }[];
  value_regex: string;
  ttl_seconds: string;
}

export interface Draft {
  enabled: boolean;
  switch_on_success: boolean;
  keep_on_channel_disabled: boolean;
  max_entries: string;
  default_ttl_seconds: string;
  rules: RuleDraft[];
}

let uid = 0;
const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
/** A number as typed; text that is not one goes to the API as is, whose message names the field. */
const numberOr = (text: string): number | string => (text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text);

export function newRule(defaultTtl: string): RuleDraft {
  return { uid: ++uid, name: '', model_regex: '', path_regex: '', user_agent_include: '', key_sources: [{ type: 'gjson', value: '' }], value_regex: '', ttl_seconds: defaultTtl, skip_retry_on_failure: false, include_using_group: true, include_model_name: true, include_rule_name: true };
}

export function draftOf(s: Settings): Draft {
  return {
    enabled: s.enabled,
    switch_on_success: s.switch_on_success,
    keep_on_channel_disabled: s.keep_on_channel_disabled,
    max_entries: String(s.max_entries),
    default_ttl_seconds: String(s.default_ttl_seconds),
    rules: s.rules.map((r) => ({
      uid: ++uid,
      name: r.name,
      model_regex: r.model_regex.join('\n'),
      path_regex: r.path_regex.join('\n'),
      user_agent_include: r.user_agent_include.join('\n'),
      key_sources: r.key_sources.map((k) => ({ type: k.type, value: (k.type === 'gjson' ? k.path : k.key) ?? '' })),
      value_regex: r.value_regex,
      ttl_seconds: String(r.ttl_seconds),
      skip_retry_on_failure: r.skip_retry_on_failure,
      include_using_group: r.include_using_group,
      include_model_name: r.include_model_name,
      include_rule_name: r.include_rule_name,
    })),
  };
}

/** The body of GS20. */
export function settingsOf(d: Draft) {
  return {
    enabled: d.enabled,
    switch_on_success: d.switch_on_success,
    keep_on_channel_disabled: d.keep_on_channel_disabled,
    max_entries: numberOr(d.max_entries),
    default_ttl_seconds: numberOr(d.default_ttl_seconds),
    rules: d.rules.map((r) => ({
      name: r.name.trim(),
      model_regex: lines(r.model_regex),
      path_regex: lines(r.path_regex),
      user_agent_include: lines(r.user_agent_include),
      key_sources: r.key_sources.map((k) => (k.type === 'gjson' ? { type: k.type, path: k.value.trim() } : { type: k.type, key: k.value.trim() })),
      value_regex: r.value_regex,
      ...(r.ttl_seconds.trim() ? { ttl_seconds: numberOr(r.ttl_seconds) } : {}),
      skip_retry_on_failure: r.skip_retry_on_failure,
      include_using_group: r.include_using_group,
      include_model_name: r.include_model_name,
      include_rule_name: r.include_rule_name,
    })),
  };
}
