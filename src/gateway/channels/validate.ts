import { AppError } from '../../kit/http/errors.js';
import type { ChannelRow } from './store.js';
import { MAX_TYPE, splitList, TYPE_CODEX, TYPE_VERTEX } from './types.js';

/** Channel fields a client may write (G02, G03). */
export interface ChannelInput {
  id?: number;
  type?: number | null;
  key?: string;
  openai_organization?: string | null;
  test_model?: string | null;
  status?: number;
  name?: string;
  weight?: number;
  base_url?: string | null;
  other?: string | null;
  models?: string;
  group?: string;
  model_mapping?: string | null;
  status_code_mapping?: string | null;
  priority?: number;
  auto_ban?: number;
  other_info?: string | null;
  tag?: string | null;
  setting?: string | null;
  param_override?: string | null;
  header_override?: string | null;
  remark?: string | null;
  settings?: string | null;
}

/** G03 fields ChannelWrite suffices for; every other written field needs ChannelSensitiveWrite. */
export const PLAIN_FIELDS = new Set(['id', 'test_model', 'name', 'weight', 'models', 'group', 'model_mapping', 'status_code_mapping', 'priority', 'auto_ban', 'other_info', 'tag', 'remark', 'multi_key_mode']);
/** Server-managed fields a client may echo back; they are ignored. */
export const IGNORED_FIELDS = new Set(['created_time', 'test_time', 'response_time', 'balance', 'balance_updated_time', 'used_quota', 'channel_info', 'status']);

/** Columns G03 overlays on the stored row (the key is handled on its own; unknown fields are dropped). */
export const WRITABLE_COLUMNS = new Set([
  'type', 'openai_organization', 'test_model', 'name', 'weight', 'base_url', 'other', 'models', 'group', 'model_mapping',
  'status_code_mapping', 'priority', 'auto_ban', 'other_info', 'tag', 'setting', 'param_override', 'header_override', 'remark', 'settings',
]);

/** Writable text columns that are NOT NULL: a null written to them stores '' (the request schemas allow null). */
export const NOT_NULL_TEXT = new Set(['base_url', 'other', 'other_info', 'settings']);

const JSON_FIELDS = ['setting', 'settings', 'model_mapping', 'status_code_mapping', 'param_override', 'header_override', 'other_info'] as const;

function invalid(detail: string): never {
  throw new AppError('CHANNEL_INVALID', { params: { detail } });
}

function jsonObject(field: string, v: string | null | undefined) {
  if (v === null || v === undefined || v.trim() === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    invalid(`${field} must be a JSON object`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) invalid(`${field} must be a JSON object`);
}

/** Ability rows one channel may imply (models × groups): the routing index of one channel stays bounded. */
export const MAX_ABILITIES_PER_CHANNEL = 100_000;

/** Characters as PostgreSQL's varchar and the request schemas count them (code points, not UTF-16 units). */
function chars(s: string) {
  return s.length <= 64 ? s.length : [...s].length;
}

/** The limits of a models list and a groups list, as their columns hold them (also G29's). */
export function validateLists(models: string | undefined, group: string | undefined) {
  const modelList = splitList(models);
  const groupList = splitList(group);
  for (const m of modelList) if (chars(m) > 255) invalid('a model name is longer than 255 characters');
  if (chars(group ?? '') > 255) invalid('group is longer than 255 characters');
  for (const g of groupList) if (chars(g) > 64) invalid('a group name is longer than 64 characters');
  if (modelList.length * Math.max(1, groupList.length) > MAX_ABILITIES_PER_CHANNEL) {
    invalid(`models × groups of a channel may not exceed ${MAX_ABILITIES_PER_CHANNEL}`);
  }
}

/**
 * The stored form of a groups list: trimmed, without empty or repeated entries ('default' when none), as
 * the abilities index reads it; so the G01/G27 group filter finds every channel serving a group.
 */
export function groupText(value: string | null | undefined): string {
  const groups = splitList(value);
  return groups.length ? groups.join(',') : 'default';
}

/** Checks the length of a tag or a name, as their columns hold them. */
export function validateLength(field: 'name' | 'tag', value: string) {
  if (chars(value) > 255) invalid(`${field} is longer than 255 characters`);
}

/** Checks the merged channel (stored row overlaid with the request) before it is written. */
export function validateChannel(c: Omit<ChannelRow, 'id' | 'key'>, keyText: string) {
  if (!Number.isInteger(c.type) || c.type < 0 || c.type > MAX_TYPE) invalid(`type must be an integer 0-${MAX_TYPE}`);
  validateLength('name', c.name);
  if (c.base_url.length > 2048) invalid('base_url is too long');
  if (c.base_url && !/^(https?:\/\/|[a-z0-9-]+$)/i.test(c.base_url)) invalid('base_url must be an http(s) URL');
  validateLists(c.models, c.group);
  if (c.weight < 0) invalid('weight must not be negative');
  if (c.auto_ban !== 0 && c.auto_ban !== 1) invalid('auto_ban must be 0 or 1');
  validateLength('tag', c.tag ?? '');
  if (chars(c.remark ?? '') > 255) invalid('remark is longer than 255 characters');
  for (const f of JSON_FIELDS) jsonObject(f, c[f]);
  if (c.type === TYPE_VERTEX) {
    let region: unknown;
    try {
      region = JSON.parse(c.other || 'null');
    } catch {
      region = null;
    }
    if (!region || typeof region !== 'object' || !(region as Record<string, unknown>).default) invalid('VertexAI needs other = JSON with a "default" region');
  }
  if (c.type === TYPE_CODEX) {
    let k: Record<string, unknown> | null = null;
    try {
      k = JSON.parse(keyText);
    } catch {
      k = null;
    }
    if (!k || typeof k !== 'object' || !k.access_token || !k.account_id) invalid('Codex key must be a JSON object with access_token and account_id');
  }
}

export function normalizeJson(v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  return v.trim() === '' ? null : v.trim();
}
