import { skip, type Skip } from '../../kit/db/batch-import.js';
import { parseInfo, type ChannelInfo } from '../channels/types.js';

/** The report's reason for a channel_info that new-api could not have read either. */
export const CORRUPT_INFO = 'channel_info must be a JSON object as new-api writes it';

const isInt = (v: unknown) => v === null || v === undefined || Number.isInteger(v);
const isStr = (v: unknown) => v === null || v === undefined || typeof v === 'string';

/** A JSON map with integer keys (Go's map[int]T), every value passing `ok`; null and absent are empty. */
function intMap(v: unknown, ok: (x: unknown) => boolean): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v !== 'object' || Array.isArray(v)) return false;
  return Object.entries(v).every(([k, x]) => /^-?\d+$/.test(k) && ok(x));
}

/** The fields new-api's ChannelInfo declares, each of the type Go would decode (null is Go's zero value). */
function wellTyped(o: Record<string, unknown>): boolean {
  return (
    (o.is_multi_key === null || o.is_multi_key === undefined || typeof o.is_multi_key === 'boolean') &&
    isInt(o.multi_key_size) &&
    isInt(o.multi_key_polling_index) &&
    isStr(o.multi_key_mode) &&
    intMap(o.multi_key_status_list, (x) => Number.isInteger(x)) &&
    intMap(o.multi_key_disabled_reason, (x) => typeof x === 'string') &&
    intMap(o.multi_key_disabled_time, (x) => Number.isInteger(x))
  );
}

/**
 * new-api's `channel_info` as each driver hands it over: GORM writes it as bytes, which SQLite keeps as a
 * BLOB (a Buffer here); a json column arrives as text (MySQL, SQLite text) or already parsed (PostgreSQL,
 * MySQL). Empty means a channel from before the column existed. Anything that is not the JSON object new-api
 * writes is a Skip, as a corrupt JSON setting is.
 */
export function readChannelInfo(v: unknown): ChannelInfo | Skip {
  let value = v;
  if (value instanceof Uint8Array) value = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  if (typeof value === 'string') {
    if (!value.trim()) return parseInfo(null);
    try {
      value = JSON.parse(value);
    } catch {
      return skip(CORRUPT_INFO);
    }
  }
  if (value === null || value === undefined) return parseInfo(null);
  if (typeof value !== 'object' || Array.isArray(value) || !wellTyped(value as Record<string, unknown>)) return skip(CORRUPT_INFO);
  return parseInfo(JSON.stringify(value));
}
