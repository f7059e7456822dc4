import { AppError } from '../../kit/http/errors.js';
import type { ChannelRow } from '../channels/store.js';
import { CHANNEL_TYPES, parseInfo, splitKeys, STATUS } from '../channels/types.js';
import { jsonObject } from '../../kit/json/object.js';

/** Everything a provider needs to talk to one upstream with one key. */
export interface UpstreamTarget {
  channelId: number | null;
  name: string;
  type: number;
  /** The channel's base URL, else its type's default; no trailing slash. */
  baseUrl: string;
  /** The one key this call uses. */
  key: string;
  /** Its position in a multi-key channel's list; null for a single-key channel. */
  keyIndex: number | null;
  /** Every secret of the channel (all keys, tokens inside JSON keys): scrubbed from whatever comes back. */
  secrets: string[];
  /** header_override with `{api_key}` replaced by the key; applied after the provider's own headers. */
  headers: Record<string, string>;
  proxy?: string;
  organization: string | null;
  other: string;
  /** The channel's `settings` JSON (azure_responses_version, upstream-update fields, …). */
  settings: Record<string, unknown>;
  modelMapping: Record<string, string>;
  testModel: string | null;
  models: string[];
}

/** String values of a JSON key (a coder channel's tokens), so they are scrubbed too. */
function innerSecrets(key: string): string[] {
  const obj = jsonObject(key.trim().startsWith('{') ? key : '{}');
  return Object.values(obj).filter((v): v is string => typeof v === 'string' && v.length >= 8);
}

export function defaultBaseUrl(type: number): string {
  return CHANNEL_TYPES[type]?.baseUrl ?? '';
}

function headerOverride(text: string | null, key: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(jsonObject(text))) {
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    out[name.toLowerCase()] = String(value).replaceAll('{api_key}', key);
  }
  return out;
}

function baseOf(baseUrl: string, type: number): string {
  return (baseUrl.trim() || defaultBaseUrl(type)).replace(/\/+$/, '');
}

/** The indexes of a multi-key channel's keys that are enabled, in order. */
export function enabledKeyIndexes(row: Pick<ChannelRow, 'channel_info'>, keyCount: number): number[] {
  const info = parseInfo(row.channel_info);
  const out: number[] = [];
  for (let i = 0; i < keyCount; i++) if ((info.multi_key_status_list[i] ?? STATUS.enabled) === STATUS.enabled) out.push(i);
  return out;
}

/**
 * The target of a stored channel. A multi-key channel uses `keyIndex` when given, else its first enabled key
 * (CHANNEL_NO_AVAILABLE_KEY when none is).
 */
export function channelTarget(row: ChannelRow, keyText: string, keyIndex?: number): UpstreamTarget {
  const info = parseInfo(row.channel_info);
  const keys = info.is_multi_key ? splitKeys(keyText) : [keyText.trim()];
  let index: number | null = null;
  if (info.is_multi_key) {
    if (keyIndex !== undefined) {
      if (keyIndex < 0 || keyIndex >= keys.length) throw new AppError('CHANNEL_KEY_INDEX_OUT_OF_RANGE');
      index = keyIndex;
    } else {
      const first = enabledKeyIndexes(row, keys.length)[0];
      if (first === undefined) throw new AppError('CHANNEL_NO_AVAILABLE_KEY');
      index = first;
    }
  }
  const key = keys[index ?? 0] ?? '';
  const setting = jsonObject(row.setting);
  const proxy = typeof setting.proxy === 'string' && setting.proxy.trim() ? setting.proxy.trim() : undefined;
  const mapping = jsonObject(row.model_mapping);
  return {
    channelId: row.id,
    name: row.name,
    type: row.type,
    baseUrl: baseOf(row.base_url, row.type),
    key,
    keyIndex: index,
    secrets: [...keys, ...keys.flatMap(innerSecrets)],
    headers: headerOverride(row.header_override, key),
    proxy,
    organization: row.openai_organization,
    other: row.other,
    settings: jsonObject(row.settings),
    modelMapping: Object.fromEntries(Object.entries(mapping).filter((e): e is [string, string] => typeof e[1] === 'string')),
    testModel: row.test_model,
    models: row.models.split(',').map((m) => m.trim()).filter(Boolean),
  };
}

/** The target of credentials that are not stored (G16): the first key line. */
export function inputTarget(input: { type: number; base_url?: string | null; key: string }): UpstreamTarget {
  const key = input.key.split('\n').map((k) => k.trim()).find(Boolean) ?? '';
  return {
    channelId: null,
    name: '',
    type: input.type,
    baseUrl: baseOf(input.base_url ?? '', input.type),
    key,
    keyIndex: null,
    secrets: [input.key.trim(), key, ...innerSecrets(key)],
    headers: {},
    organization: null,
    other: '',
    settings: {},
    modelMapping: {},
    testModel: null,
    models: [],
  };
}
