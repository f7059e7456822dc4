import { AppError } from '../../kit/http/errors.js';
import { RATIO_FIELDS, type RatioField, type Ratios } from './formats.js';

/** The most entries one map may hold (models or groups). */
export const MAX_ENTRIES = 20_000;
const TEXT_FIELDS: readonly string[] = ['billing_mode', 'billing_expr'];

/** A ratio configuration as stored: the ratio maps, and `group_ratio` when it was given. */
export interface RatioConfig {
  ratios: Ratios;
  groupRatio?: Record<string, number>;
}

function fail(code: string, field: string, extra: Record<string, string | number> = {}): never {
  throw new AppError(code, { params: { field, ...extra }, data: { field, ...('model' in extra ? { model: String(extra.model) } : {}) } });
}

function entries(field: string, map: unknown): [string, unknown][] {
  if (!map || typeof map !== 'object' || Array.isArray(map)) fail('RATIO_CONFIG_FIELD_INVALID', field);
  const list = Object.entries(map);
  if (list.length > MAX_ENTRIES) fail('RATIO_CONFIG_TOO_LARGE', field, { max: MAX_ENTRIES });
  return list;
}

/**
 * Checks a whole ratio configuration (new-api's `/api/ratio_config` maps, plus `group_ratio`) and names the
 * first field at fault: an unknown field, a field that is not a map, a bad name or a value that is not a
 * number ≥ 0 (text for billing_mode and billing_expr). Nothing is dropped silently.
 */
export function validateRatioConfig(input: unknown): RatioConfig {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw new AppError('RATIO_CONFIG_INVALID');
  const ratios: Ratios = {};
  let groupRatio: Record<string, number> | undefined;
  for (const [field, map] of Object.entries(input)) {
    if (field === 'group_ratio') {
      groupRatio = {};
      for (const [group, v] of entries(field, map)) {
        if (!group || group.length > 64) fail('RATIO_CONFIG_MODEL_INVALID', field, { max: 64 });
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail('RATIO_CONFIG_VALUE_INVALID', field, { model: group.slice(0, 64) });
        groupRatio[group] = v;
      }
      continue;
    }
    if (!(RATIO_FIELDS as readonly string[]).includes(field)) fail('RATIO_CONFIG_FIELD_UNKNOWN', field.slice(0, 64));
    const out: Record<string, number | string> = {};
    for (const [model, v] of entries(field, map)) {
      if (!model || model.length > 255) fail('RATIO_CONFIG_MODEL_INVALID', field, { max: 255 });
      const ok = TEXT_FIELDS.includes(field) ? (typeof v === 'string' && v.length <= 2000) || (typeof v === 'number' && Number.isFinite(v)) : typeof v === 'number' && Number.isFinite(v) && v >= 0;
      if (!ok) fail('RATIO_CONFIG_VALUE_INVALID', field, { model: model.slice(0, 255) });
      out[model] = v as number | string;
    }
    ratios[field as RatioField] = out;
  }
  return groupRatio ? { ratios, groupRatio } : { ratios };
}
