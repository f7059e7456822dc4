import { TOKEN_STATUS } from '../../contract/customer.js';
import { AppError } from '../../kit/http/errors.js';
import { parseIpList, type IpList } from '../../kit/http/ip-list.js';
import { nowSeconds } from '../db.js';

/**
 * An account user's token as a call sees it (the key's edge_tokens row): what the edge enforces before a
 * call is quoted or reserved. Its spending limit is enforced by the reservation (runs/reserve.ts), on the
 * row itself, so concurrent calls never spend past it.
 */
export interface TokenIdentity {
  id: number;
  name: string;
  /** The stored status: 2 disabled; 1 (and an imported 3 or 4) enabled unless expired. */
  status: number;
  /** Seconds since the epoch; -1: never. */
  expiredTime: number;
  /** The public models it may call; null: any. */
  models: ReadonlySet<string> | null;
  /** The client addresses it may be used from; null: any. */
  ips: IpList | null;
}

/** new-api's model_limits: public model ids separated by commas. */
export function modelLimitsOf(text: string): string[] {
  return text
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
}

/** Whether a token (expired_time -1: never) has expired at `now` (seconds), as new-api decides it. */
export function tokenExpired(expiredTime: number, now = nowSeconds()): boolean {
  return expiredTime !== -1 && expiredTime < now;
}

// Parsed lists of the tokens in use (a token's list rarely changes): bounded, dropped whole when full.
const IP_LISTS = new Map<string, IpList>();
const IP_LISTS_MAX = 1000;

function ipListOf(text: string): IpList | null {
  if (text.trim() === '') return null;
  let list = IP_LISTS.get(text);
  if (!list) {
    if (IP_LISTS.size >= IP_LISTS_MAX) IP_LISTS.clear();
    IP_LISTS.set(text, (list = parseIpList(text)));
  }
  return list.entries.length ? list : null;
}

/** The token of a key row (keys/store.ts keyWithOwner), or null for a CLI key. */
export function tokenIdentityOf(row: {
  token_id: number | null;
  token_name: string | null;
  token_status: number | null;
  token_expired_time: number | null;
  token_model_limits_enabled: number | null;
  token_model_limits: string | null;
  token_allow_ips: string | null;
}): TokenIdentity | null {
  if (row.token_id === null) return null;
  return {
    id: Number(row.token_id),
    name: row.token_name ?? '',
    status: Number(row.token_status),
    expiredTime: Number(row.token_expired_time),
    models: Number(row.token_model_limits_enabled) === 1 ? new Set(modelLimitsOf(row.token_model_limits ?? '')) : null,
    ips: ipListOf(row.token_allow_ips ?? ''),
  };
}

/** Refuses a disabled (401 token_disabled) or expired (401 token_expired) token, or a caller outside its addresses (403 ip_not_allowed). */
export function checkTokenAccess(token: TokenIdentity, clientIp: string) {
  if (token.status !== TOKEN_STATUS.enabled && token.status !== TOKEN_STATUS.expired && token.status !== TOKEN_STATUS.exhausted) throw new AppError('token_disabled');
  if (tokenExpired(token.expiredTime)) throw new AppError('token_expired');
  if (token.ips && !token.ips.matches(clientIp)) throw new AppError('ip_not_allowed');
}

/** Refuses (403 model_not_allowed) a public model outside the token's model_limits, before any quote or reservation. */
export function checkModelAllowed(token: TokenIdentity | null, publicModelId: string, field: string) {
  if (token?.models && !token.models.has(publicModelId)) throw new AppError('model_not_allowed', { params: { model: publicModelId, field } });
}
