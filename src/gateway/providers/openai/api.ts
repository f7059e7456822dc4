import type { UpstreamTarget } from '../../upstream/target.js';
import { reasoning } from '../pivot.js';
import type { TestRequest } from '../types.js';

export function openaiHeaders(t: UpstreamTarget): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${t.key}`, accept: 'application/json' };
  if (t.organization) h['openai-organization'] = t.organization;
  return h;
}

/** The headers a JSON body adds to a provider's own. */
export const JSON_HEADERS = { 'content-type': 'application/json' };

/** The body of the reference's test request for the OpenAI-style endpoints (the providers that serve them test with it). */
export function openaiTestBody(r: TestRequest): Record<string, unknown> {
  if (r.endpoint === 'embeddings') return { model: r.model, input: 'hello world' };
  if (r.endpoint === 'openai-response') return { model: r.model, input: 'hi', max_output_tokens: 16, stream: r.stream };
  return {
    model: r.model,
    messages: [{ role: 'user', content: 'hi' }],
    [reasoning(r.model) ? 'max_completion_tokens' : 'max_tokens']: 16,
    stream: r.stream,
    ...(r.stream ? { stream_options: { include_usage: true } } : {}),
  };
}

/** The OpenAI-style path of an endpoint type. */
export function openaiPath(endpoint: TestRequest['endpoint']): string {
  return endpoint === 'embeddings' ? '/v1/embeddings' : endpoint === 'openai-response' ? '/v1/responses' : '/v1/chat/completions';
}

/** The headers of OpenAI's media requests: any answer type (audio, text, subtitles); a form sets its own content type. */
export function mediaHeaders(headers: Record<string, string>, body: 'json' | 'form'): Record<string, string> {
  return { ...headers, accept: '*/*', ...(body === 'json' ? JSON_HEADERS : {}) };
}
