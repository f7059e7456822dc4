import type { Provider, TestRequest } from '../../providers/types.js';
import { reasoning } from '../../providers/pivot.js';

/** A provider's control-plane part (model list and test). */
export type ChannelAdapter = Pick<Provider, 'listModels' | 'endpoints' | 'test'>;

/** The body of the reference's test request for the OpenAI-style endpoints. */
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
