import type { ProbeOutcome } from '../upstream/probe.js';

export interface AutoRules {
  autoDisable: boolean;
  autoEnable: boolean;
  disableThresholdSeconds: number;
  disableStatusCodes: number[];
  /** Lower-case substrings of an upstream error message. */
  disableKeywords: string[];
}

/** Upstream error codes and types that mean the credential itself is bad (the reference's list). */
const DISABLING_CODES = new Set([
  'invalid_api_key', 'account_deactivated', 'billing_not_active', 'Arrearage', 'insufficient_quota', 'insufficient_user_quota',
  'authentication_error', 'permission_error', 'forbidden',
]);

export const RESPONSE_TIME_EXCEEDED = 'channel:response_time_exceeded';

/**
 * A scheduled test's result after the response-time rule: a success slower than the threshold counts as a
 * `channel:response_time_exceeded` failure when automatic disabling is on (as the reference's G33).
 */
export function judged(outcome: ProbeOutcome, ms: number, rules: AutoRules): ProbeOutcome {
  if (outcome.ok && rules.autoDisable && rules.disableThresholdSeconds > 0 && ms > rules.disableThresholdSeconds * 1000) {
    return { ok: false, errorCode: RESPONSE_TIME_EXCEEDED, message: `response time ${(ms / 1000).toFixed(2)} s is over the threshold of ${rules.disableThresholdSeconds} s` };
  }
  return outcome;
}

/** The reference's ShouldDisableChannel: channel errors, listed statuses, credential error codes, keywords. */
export function shouldDisable(outcome: ProbeOutcome, rules: AutoRules): boolean {
  if (outcome.ok || !rules.autoDisable) return false;
  if (outcome.errorCode.startsWith('channel:')) return true;
  if (outcome.status !== undefined && rules.disableStatusCodes.includes(outcome.status)) return true;
  if (DISABLING_CODES.has(outcome.errorCode)) return true;
  const message = outcome.message.toLowerCase();
  return rules.disableKeywords.some((k) => message.includes(k));
}
