import type { UpstreamTarget } from '../../upstream/target.js';
import type { UpstreamCall } from '../types.js';

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'x-api-key': t.key, 'anthropic-version': ANTHROPIC_VERSION, accept: 'application/json' };
}

/**
 * A Messages request (`POST /v1/messages`), whole or streamed. An Anthropic caller's own anthropic-version
 * and anthropic-beta (`vendorHeaders`) replace the default version and name the betas it uses.
 */
export function messagesCall(t: UpstreamTarget, body: unknown, stream: boolean, vendorHeaders: Record<string, string> = {}): UpstreamCall {
  const headers: Record<string, string> = { ...anthropicHeaders(t), ...vendorHeaders, 'content-type': 'application/json' };
  if (stream) headers.accept = 'text/event-stream';
  return { url: `${t.baseUrl}/v1/messages`, headers, body };
}

/** A token count (`POST /v1/messages/count_tokens`) of a Messages body, answered `{input_tokens}`. */
export function countTokensCall(t: UpstreamTarget, body: unknown, vendorHeaders: Record<string, string> = {}): UpstreamCall {
  return { url: `${t.baseUrl}/v1/messages/count_tokens`, headers: { ...anthropicHeaders(t), ...vendorHeaders, 'content-type': 'application/json' }, body };
}
