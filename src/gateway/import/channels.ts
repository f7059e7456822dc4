import type { Kysely } from 'kysely';
import { AppError } from '../../kit/http/errors.js';
import { skip, Skip } from '../../kit/db/batch-import.js';
import { int, text, unixSeconds } from '../../kit/db/source.js';
import type { ChannelRow } from '../channels/store.js';
import { MAX_TYPE, resizeInfo, splitKeys, STATUS } from '../channels/types.js';
import { groupText, normalizeJson, validateChannel } from '../channels/validate.js';
import { readChannelInfo } from './channel-info.js';

export type SourceRow = Record<string, unknown>;

/** A channel as the gateway stores it (key still in clear: the caller seals it) and the key text. */
export interface MappedChannel {
  row: Omit<ChannelRow, 'id' | 'key'>;
  keyText: string;
}

const nullable = (v: unknown) => (v === null || v === undefined ? null : String(v));

/**
 * A new-api `channels` row as our channel model holds it. The columns are the same (ours were modelled on
 * the reference); the differences are the normalisations G02 applies: groups trimmed and de-duplicated,
 * empty JSON settings as NULL, a multi-key channel's keys one per line with its per-key state kept inside
 * the key count. Answers a Skip for what G02 would refuse and for a channel_info new-api could not read.
 */
export function mapChannel(s: SourceRow): MappedChannel | Skip {
  const type = int(s.type, 0);
  if (type < 0 || type > MAX_TYPE) return skip(`unsupported channel type ${type}`);
  const rawKey = text(s.key);
  if (!rawKey.trim()) return skip('the channel has no key');
  const read = readChannelInfo(s.channel_info);
  if (read instanceof Skip) return read;
  let info = read;
  let keyText = rawKey.trim();
  if (info.is_multi_key) {
    const keys = splitKeys(rawKey);
    keyText = keys.join('\n');
    info = resizeInfo(info, keys.length);
  }
  const status = int(s.status, STATUS.enabled);
  const tag = text(s.tag).trim();
  const row: Omit<ChannelRow, 'id' | 'key'> = {
    type,
    // GORM names the column of OpenAIOrganization open_ai_organization.
    openai_organization: nullable(s.open_ai_organization),
    test_model: nullable(s.test_model),
    status: status === STATUS.enabled || status === STATUS.manual || status === STATUS.auto ? status : STATUS.manual,
    name: text(s.name),
    weight: int(s.weight, 0),
    created_time: unixSeconds(s.created_time) ?? 0,
    test_time: unixSeconds(s.test_time) ?? 0,
    response_time: int(s.response_time, 0),
    base_url: text(s.base_url),
    other: text(s.other),
    balance: Number(s.balance ?? 0) || 0,
    balance_updated_time: unixSeconds(s.balance_updated_time) ?? 0,
    models: text(s.models),
    group: groupText(text(s.group)),
    used_quota: int(s.used_quota, 0),
    model_mapping: normalizeJson(nullable(s.model_mapping)),
    status_code_mapping: normalizeJson(nullable(s.status_code_mapping)),
    priority: int(s.priority, 0),
    // The reference treats a NULL auto_ban as off.
    auto_ban: s.auto_ban === null || s.auto_ban === undefined ? 0 : int(s.auto_ban, 1) === 1 ? 1 : 0,
    other_info: text(s.other_info),
    tag: tag || null,
    setting: normalizeJson(nullable(s.setting)),
    param_override: normalizeJson(nullable(s.param_override)),
    header_override: normalizeJson(nullable(s.header_override)),
    remark: nullable(s.remark),
    channel_info: JSON.stringify(info),
    settings: text(s.settings),
  };
  try {
    validateChannel(row, keyText);
  } catch (e) {
    if (e instanceof AppError && e.code === 'CHANNEL_INVALID') return skip(`refused as G02 would: ${String(e.options.params?.detail ?? 'invalid')}`);
    throw e;
  }
  return { row, keyText };
}

/** What a later run compares: every stored column plus the key (only its digest is ever kept). */
export function channelFields(m: MappedChannel): Record<string, unknown> {
  return { ...m.row, key: m.keyText };
}

export type Db = Kysely<any>;
