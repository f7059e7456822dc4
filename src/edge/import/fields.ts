import crypto from 'node:crypto';
import { int, text, truthy, unixSeconds } from '../../kit/db/source.js';

export type SourceRow = Record<string, unknown>;

export const sha256Hex = (v: string) => crypto.createHash('sha256').update(v, 'utf8').digest('hex');

/** Whether GORM soft-deleted the row (deleted_at set). */
export const deletedIn = (s: SourceRow) => s.deleted_at !== null && s.deleted_at !== undefined && s.deleted_at !== '';

const chars = (v: string) => [...v].length;

/**
 * The key a customer sends for a new-api token: new-api stores it without the `sk-` its relay strips from
 * the presented key, so the key in the customer's hands is `sk-` and the stored 48 characters.
 */
export const customerKeyOf = (s: SourceRow) => `sk-${text(s.key).trim()}`;

/** A new-api `tokens` row as edge_tokens holds it (the key apart: only its hash and mask are kept). */
export function tokenFields(s: SourceRow) {
  return {
    name: text(s.name),
    // The edge stores 1 or 2 and reports 3 (expired) and 4 (exhausted) from the expiry and the quota left.
    status: int(s.status, 1) === 2 ? 2 : 1,
    expired_time: int(s.expired_time, -1),
    remain_quota: int(s.remain_quota, 0),
    unlimited_quota: truthy(s.unlimited_quota) ? 1 : 0,
    model_limits_enabled: truthy(s.model_limits_enabled) ? 1 : 0,
    model_limits: text(s.model_limits),
    allow_ips: text(s.allow_ips),
    group_name: text(s.group).trim(),
    used_quota: int(s.used_quota, 0),
    accessed_time: unixSeconds(s.accessed_time) ?? 0,
    created_time: unixSeconds(s.created_time) ?? 0,
  };
}

/** Why a token cannot be stored here (null when it can); the key's form is checked apart. */
export function tokenProblem(s: SourceRow): string | null {
  const f = tokenFields(s);
  if (chars(f.name) > 64) return 'name longer than 64 characters';
  if (chars(f.group_name) > 64) return 'group longer than 64 characters';
  const status = int(s.status, 1);
  if (![1, 2, 3, 4].includes(status)) return `unknown status ${status}`;
  return null;
}

/** A new-api `redemptions` row as edge_redemptions holds it (the code apart: only its hash and mask are kept). */
export function redemptionFields(s: SourceRow) {
  return {
    name: text(s.name),
    quota: int(s.quota, 0),
    created_time: unixSeconds(s.created_time) ?? 0,
    expired_time: int(s.expired_time, 0),
  };
}

/** Why an unused code cannot be brought over (null when it can). */
export function redemptionProblem(s: SourceRow): string | null {
  if (deletedIn(s)) return 'deleted in the source';
  const status = int(s.status, 1);
  if (status === 3) return 'used in the source';
  if (status !== 1) return 'disabled in the source';
  const f = redemptionFields(s);
  if (!text(s.key).trim()) return 'the code is empty';
  if (chars(f.name) > 64) return 'name longer than 64 characters';
  if (f.quota <= 0) return 'the code is worth nothing';
  return null;
}
