import type { UpstreamTarget } from '../../upstream/target.js';
import type { UpstreamCall } from '../types.js';

export const ANTHROPIC_VERSION = '2023-06-01';

export function anthropicHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'x-api-key': t.key, 'anthropic-version': ANTHROPIC_VERSION, accept: 'application/json' };
}

/** A Messages request (`POST /v1/messages`), whole or streamed. */
export function messagesCall(t: UpstreamTarget, body: unknown, stream: boolean): UpstreamCall {
  const headers: Record<string, string> = { ...anthropicHeaders(t), 'content-type': 'application/json' };
  if (stream) headers.accept = 'text/event-stream';
  return { url: `${t.baseUrl}/v1/messages`, headers, body };
}
