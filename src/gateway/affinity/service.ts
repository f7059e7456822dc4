import crypto from 'node:crypto';
import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { USAGE_FIELDS, type AffinityCache, type UsageCounters } from './cache.js';
import { loadSettings, saveSettings, type AffinityRule, type AffinitySettings, type KeySource } from './settings.js';

/** What a relay knows about one request when it asks for, or records, an affinity (the write path's input). */
export interface RelayRequest {
  model: string;
  /** The group the request was routed in ("using group"). */
  group: string;
  path?: string;
  userAgent?: string;
  headers?: Record<string, string>;
  /** The request's JSON body. */
  body?: unknown;
  /** Values the relay already resolved (token id, user id, …) for context_int / context_string sources. */
  context?: Record<string, string | number>;
}

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  cached_tokens?: number;
  prompt_cache_hit_tokens?: number;
}

/** The reference's key fingerprint: the first 8 hex characters of the value's SHA-1. */
export function keyFingerprint(value: string) {
  return crypto.createHash('sha1').update(value).digest('hex').slice(0, 8);
}

/** first4...last4 of a value, or only stars when it is too short to show any of it. */
export function keyHint(value: string) {
  return value.length > 12 ? `${value.slice(0, 4)}...${value.slice(-4)}` : '*'.repeat(Math.min(value.length, 8));
}

function jsonPath(body: unknown, path: string): unknown {
  let v = body;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function sourceValue(src: KeySource, r: RelayRequest): string {
  let v: unknown;
  if (src.type === 'gjson') v = jsonPath(r.body, src.path!);
  else if (src.type === 'request_header') v = Object.entries(r.headers ?? {}).find(([k]) => k.toLowerCase() === src.key!.toLowerCase())?.[1];
  else v = r.context?.[src.key!];
  if (src.type === 'context_int' && typeof v !== 'number') return '';
  return typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '';
}

/** The first rule that applies to the request and the affinity value it yields (the reference's matching). */
export function matchRule(settings: AffinitySettings, r: RelayRequest): { rule: AffinityRule; value: string } | null {
  if (!settings.enabled) return null;
  for (const rule of settings.rules) {
    if (rule.model_regex.length && !rule.model_regex.some((re) => new RegExp(re).test(r.model))) continue;
    if (rule.path_regex.length && !rule.path_regex.some((re) => new RegExp(re).test(r.path ?? ''))) continue;
    const ua = (r.userAgent ?? '').toLowerCase();
    if (rule.user_agent_include.length && !rule.user_agent_include.some((s) => ua.includes(s.toLowerCase()))) continue;
    let value = '';
    for (const src of rule.key_sources) if ((value = sourceValue(src, r))) break;
    if (!value || value.length > 4096) continue;
    if (rule.value_regex) {
      const m = new RegExp(rule.value_regex).exec(value);
      if (!m) continue;
      value = m[1] ?? m[0];
    }
    return { rule, value };
  }
  return null;
}

/** How long the relay reuses the settings it read (saves from the CLI show within this time). */
const SETTINGS_TTL_MS = 1000;

/** The channel-affinity cache: the relay's write path, and the operators' views (G60–G62). */
export class AffinityService {
  private loaded: { at: number; settings: Promise<AffinitySettings> } | null = null;

  constructor(
    private readonly ctx: GatewayContext,
    readonly cache: AffinityCache,
  ) {}

  /** The stored settings, read now (the operators' views). */
  settings(): Promise<AffinitySettings> {
    return loadSettings(this.ctx);
  }

  /** Stores validated settings; this process's relay reads them again on its next call. */
  async saveSettings(settings: AffinitySettings) {
    await saveSettings(this.ctx, settings);
    this.loaded = null;
  }

  /** The settings for the relay's per-call path, re-read at most every SETTINGS_TTL_MS. */
  private relaySettings(): Promise<AffinitySettings> {
    if (!this.loaded || Date.now() - this.loaded.at >= SETTINGS_TTL_MS) {
      const settings = loadSettings(this.ctx);
      this.loaded = { at: Date.now(), settings };
      settings.catch(() => (this.loaded = null));
    }
    return this.loaded.settings;
  }

  private entryKey(rule: AffinityRule, r: RelayRequest, value: string) {
    const sha = crypto.createHash('sha256').update(value).digest('hex');
    return `v1:${rule.include_rule_name ? rule.name : '_'}:${rule.include_model_name ? r.model : '_'}:${rule.include_using_group ? r.group : '_'}:${sha}`;
  }

  /** The channel a matching request should stick to, if one was recorded and has not expired. */
  async lookup(r: RelayRequest): Promise<{ channel_id: number; rule_name: string; key_fp: string; skip_retry_on_failure: boolean } | null> {
    const m = matchRule(await this.relaySettings(), r);
    if (!m) return null;
    const channel = await this.cache.get(this.entryKey(m.rule, r, m.value));
    return channel === null ? null : { channel_id: channel, rule_name: m.rule.name, key_fp: keyFingerprint(m.value), skip_retry_on_failure: m.rule.skip_retry_on_failure };
  }

  /** Drops the entry a matching request would use (its channel just failed). */
  async forget(r: RelayRequest) {
    const m = matchRule(await this.relaySettings(), r);
    if (m) await this.cache.drop(this.entryKey(m.rule, r, m.value));
  }

  /**
   * After the relay served a matching request from `channelId`: remembered when there was no entry, or
   * when the entry named another channel and `switch_on_success` is on.
   */
  async recordChosen(r: RelayRequest, channelId: number, hadEntry: boolean) {
    if (hadEntry && !(await this.relaySettings()).switch_on_success) return;
    await this.record(r, channelId);
  }

  /** Records that a matching request was served by `channelId` (for the rule's TTL). */
  async record(r: RelayRequest, channelId: number): Promise<{ rule_name: string; key_fp: string; key_hint: string } | null> {
    const settings = await this.relaySettings();
    const m = matchRule(settings, r);
    if (!m) return null;
    await this.cache.set(this.entryKey(m.rule, r, m.value), channelId, m.rule.ttl_seconds, settings.max_entries);
    return { rule_name: m.rule.name, key_fp: keyFingerprint(m.value), key_hint: keyHint(m.value) };
  }

  /** Adds a response's token usage to the (rule, group, key) counters; `hit` when cached tokens were served. */
  async recordUsage(r: RelayRequest, usage: Usage): Promise<{ rule_name: string; key_fp: string } | null> {
    const m = matchRule(await this.relaySettings(), r);
    if (!m) return null;
    const fp = keyFingerprint(m.value);
    const cached = (usage.cached_tokens ?? 0) + (usage.prompt_cache_hit_tokens ?? 0);
    const delta = Object.fromEntries(USAGE_FIELDS.filter((f) => f !== 'hit' && f !== 'total').map((f) => [f, Math.max(0, Math.floor(usage[f as keyof Usage] ?? 0))]));
    await this.cache.addUsage(`${m.rule.name}:${r.group}:${fp}`, { ...delta, total: 1, hit: cached > 0 ? 1 : 0 }, m.rule.ttl_seconds);
    return { rule_name: m.rule.name, key_fp: fp };
  }

  /** G62. */
  async stats() {
    const settings = await this.settings();
    const counts = await this.cache.stats();
    const { _: unknown = 0, ...byRule } = counts;
    return {
      enabled: settings.enabled,
      total: Object.values(counts).reduce((a, b) => a + b, 0),
      unknown,
      by_rule_name: byRule,
      cache_capacity: settings.max_entries,
      cache_algo: this.cache.algo,
    };
  }

  /** G61: every entry (`all`), or one rule's (which must exist and keep its name in its keys). */
  async clear(actor: Actor, q: { all?: boolean; rule_name?: string }) {
    let deleted: number;
    if (q.all) {
      deleted = await this.cache.delete();
    } else if (q.rule_name) {
      const rule = (await this.settings()).rules.find((r) => r.name === q.rule_name);
      if (!rule || !rule.include_rule_name) throw new AppError('AFFINITY_RULE_INVALID', { params: { rule: q.rule_name } });
      deleted = await this.cache.delete(rule.name);
    } else {
      throw new AppError('AFFINITY_CLEAR_TARGET_REQUIRED');
    }
    await audit(this.ctx.db, actor, 'G61', null, { ...(q.all ? { all: true } : { rule_name: q.rule_name }), deleted });
    return { deleted };
  }

  /** G60: the counters of one (rule, group, key fingerprint); zeros when there are none. */
  async usage(q: { rule_name: string; using_group?: string; key_fp: string }) {
    const settings = await this.settings();
    const rule = settings.rules.find((r) => r.name === q.rule_name);
    const group = q.using_group ?? '';
    const u: UsageCounters = (await this.cache.usage(`${q.rule_name}:${group}:${q.key_fp}`)) ?? { hit: 0, total: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, prompt_cache_hit_tokens: 0, last_seen_at: 0 };
    return { rule_name: q.rule_name, using_group: group, key_fp: q.key_fp, window_seconds: rule?.ttl_seconds ?? settings.default_ttl_seconds, ...u };
  }
}
