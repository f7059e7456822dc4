import { CustomerRefusal, type TokenSettings } from '../../../contract/customer.js';
import { EDGE_GROUP_PATTERN, EDGE_MODEL_ID_PATTERN } from '../../../contract/edge-admin.js';
import { invalidIpEntry, ipListEntries } from '../../../kit/http/ip-list.js';
import { nowSeconds } from '../../db.js';
import { modelLimitsOf } from '../../keys/token-limits.js';
import type { TokenFields } from './store.js';

/** new-api's largest remain_quota: 1e9 USD in units. */
export const MAX_REMAIN_QUOTA = 1_000_000_000 * 500_000;
/** The last second a token may expire at (9999-12-31T23:59:59Z). */
const MAX_EXPIRED_TIME = 253_402_300_799;
/** A new token's expiry may lie this far in the past (the customer's clock, the form's rounding). */
const EXPIRY_SKEW_SECONDS = 300;
/** Sizes of the text settings (new-api keeps them in unbounded text columns). */
const MAX_LIST_CHARS = 16_384;
const MAX_LIST_ENTRIES = 1000;

const MODEL_ID = new RegExp(EDGE_MODEL_ID_PATTERN);
const GROUP = new RegExp(EDGE_GROUP_PATTERN);

function invalid(detail: string): never {
  throw new CustomerRefusal('invalid', detail);
}

/**
 * Checks what a customer sets on a token as new-api does (name at most 50 characters, remain_quota from 0 to
 * 1e9 USD, expired_time -1 or a time) and more strictly where the edge enforces it: every model_limits entry
 * a public model id, every allow_ips entry an IP or CIDR. A new token may not be expired already; an edited
 * one may keep its past expiry. Answers the row's columns.
 */
export function tokenFields(s: TokenSettings, creating: boolean): TokenFields {
  if (!s || typeof s !== 'object') invalid('the token settings are missing');
  const name = typeof s.name === 'string' ? s.name : '';
  if (name.trim() === '' || [...name].length > 50) invalid('name must be 1 to 50 characters, not only spaces');
  if (/[\u0000-\u001f\u007f]/.test(name)) invalid('name must not contain control characters');
  const expired = s.expired_time;
  if (!Number.isSafeInteger(expired) || (expired !== -1 && (expired < 1 || expired > MAX_EXPIRED_TIME))) invalid('expired_time must be -1 (never) or a time in seconds since the epoch');
  if (creating && expired !== -1 && expired < nowSeconds() - EXPIRY_SKEW_SECONDS) invalid('expired_time is in the past');
  if (!Number.isSafeInteger(s.remain_quota) || s.remain_quota < 0 || s.remain_quota > MAX_REMAIN_QUOTA) invalid(`remain_quota must be an integer from 0 to ${MAX_REMAIN_QUOTA}`);
  if (typeof s.unlimited_quota !== 'boolean') invalid('unlimited_quota must be true or false');
  if (typeof s.model_limits_enabled !== 'boolean') invalid('model_limits_enabled must be true or false');
  const modelLimits = typeof s.model_limits === 'string' ? s.model_limits : invalid('model_limits must be a string of model ids separated by commas');
  if (modelLimits.length > MAX_LIST_CHARS) invalid(`model_limits must be at most ${MAX_LIST_CHARS} characters`);
  const models = modelLimitsOf(modelLimits);
  if (models.length > MAX_LIST_ENTRIES) invalid(`model_limits may name at most ${MAX_LIST_ENTRIES} models`);
  const badModel = models.find((m) => !MODEL_ID.test(m));
  if (badModel !== undefined) invalid(`model_limits: ${badModel.slice(0, 64)} is not a model id`);
  const allowIps = typeof s.allow_ips === 'string' ? s.allow_ips : invalid('allow_ips must be a string of IPs or CIDRs separated by commas or new lines');
  if (allowIps.length > MAX_LIST_CHARS) invalid(`allow_ips must be at most ${MAX_LIST_CHARS} characters`);
  const ips = ipListEntries(allowIps);
  if (ips.length > MAX_LIST_ENTRIES) invalid(`allow_ips may hold at most ${MAX_LIST_ENTRIES} entries`);
  const badIp = invalidIpEntry(ips);
  if (badIp !== null) invalid(`allow_ips: ${badIp.slice(0, 64)} is not an IP address or CIDR`);
  const group = typeof s.group === 'string' ? s.group : invalid('group must be a string');
  if (group !== '' && !GROUP.test(group)) invalid('group must be empty or 1 to 64 of A-Z a-z 0-9 _ . -');
  return {
    name,
    expired_time: expired,
    remain_quota: s.remain_quota,
    unlimited_quota: s.unlimited_quota ? 1 : 0,
    model_limits_enabled: s.model_limits_enabled ? 1 : 0,
    model_limits: modelLimits,
    allow_ips: allowIps,
    group_name: group,
  };
}
