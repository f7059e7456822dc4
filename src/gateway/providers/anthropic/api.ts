import type { UpstreamTarget } from '../../upstream/target.js';
import type { UpstreamCall, VendorPassed } from '../types.js';

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'x-api-key': t.key, 'anthropic-version': ANTHROPIC_VERSION, accept: 'application/json' };
}

/** The caller's headers and, when it asked `?beta=true`, the same query on the path: what an Anthropic caller sends on (VendorPassed). */
function passedOn(t: UpstreamTarget, path: string, vendor: VendorPassed): { url: string; headers: Record<string, string> } {
  return { url: `${t.baseUrl}${path}${vendor.betaQuery ? '?beta=true' : ''}`, headers: { ...anthropicHeaders(t), ...vendor.vendorHeaders, 'content-type': 'application/json' } };
}

/**
 * A Messages request (`POST /v1/messages`), whole or streamed. An Anthropic caller's own anthropic-version
 * and anthropic-beta replace the default version and name the betas it uses; its `?beta=true` is sent on
 * (as new-api does).
 */
export function messagesCall(t: UpstreamTarget, body: unknown, stream: boolean, vendor: VendorPassed = {}): UpstreamCall {
  const { url, headers } = passedOn(t, '/v1/messages', vendor);
  if (stream) headers.accept = 'text/event-stream';
  return { url, headers, body };
}

/** A token count (`POST /v1/messages/count_tokens`) of a Messages body, answered `{input_tokens}`. */
export function countTokensCall(t: UpstreamTarget, body: unknown, vendor: VendorPassed = {}): UpstreamCall {
  return { ...passedOn(t, '/v1/messages/count_tokens', vendor), body };
}
