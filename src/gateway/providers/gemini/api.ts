import type { UpstreamTarget } from '../../upstream/target.js';
import type { UpstreamCall } from '../types.js';

/** The key goes in `x-goog-api-key`, never in the URL (URLs end up in proxies' and servers' logs). */
export function geminiHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'x-goog-api-key': t.key, accept: 'application/json' };
}

/** The headers of a request with a JSON body. */
export function jsonHeaders(t: UpstreamTarget): Record<string, string> {
  return { ...geminiHeaders(t), 'content-type': 'application/json' };
}

/** A generateContent request for `model`, or streamGenerateContent as server-sent events. */
export function generateContentCall(t: UpstreamTarget, model: string, body: unknown, stream: boolean): UpstreamCall {
  const action = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { url: `${t.baseUrl}/v1beta/models/${encodeURIComponent(model)}:${action}`, headers: jsonHeaders(t), body };
}

/** A token count (`models/{model}:countTokens`) of a countTokens body, answered `{totalTokens}`. */
export function countTokensCall(t: UpstreamTarget, model: string, body: unknown): UpstreamCall {
  return { url: `${t.baseUrl}/v1beta/models/${encodeURIComponent(model)}:countTokens`, headers: jsonHeaders(t), body };
}
