import type { UpstreamClient } from '../../../kit/upstream/client.js';
import type { ProbeOutcome } from '../probe.js';
import type { UpstreamTarget } from '../target.js';

/** What an adapter may use: the gateway's upstream client (address policy, deadlines, body caps). */
export interface AdapterContext {
  upstream: UpstreamClient;
}

/**
 * One upstream wire family (OpenAI-compatible, Azure OpenAI, Anthropic, Gemini, Ollama, Codex). Each knows
 * its paths, auth headers and answer shapes; the gateway's services never build upstream requests themselves.
 */
export interface ChannelAdapter {
  family: 'openai' | 'azure' | 'anthropic' | 'gemini' | 'ollama' | 'codex';
  /** The model ids the upstream offers, de-duplicated, in the upstream's order. */
  listModels(ctx: AdapterContext, t: UpstreamTarget): Promise<string[]>;
  /** Endpoint types this family can test; the first is its default. */
  endpoints: readonly EndpointType[];
  /** One minimal request ("hi", 16 tokens) to `model` on `endpoint`, streamed or not. */
  test(ctx: AdapterContext, t: UpstreamTarget, r: TestRequest): Promise<ProbeOutcome>;
}

/** The reference's endpoint types for a channel test (those this product can send). */
export const ENDPOINT_TYPES = ['openai', 'openai-response', 'embeddings', 'anthropic', 'gemini'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

export interface TestRequest {
  /** The model name sent upstream (after the channel's model mapping). */
  model: string;
  endpoint: EndpointType;
  stream: boolean;
  timeoutMs: number;
}

/** o-series and gpt-5 models take max_completion_tokens instead of max_tokens. */
export function reasoning(model: string) {
  return /^(o\d|gpt-5)/i.test(model);
}

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
export function openaiPath(endpoint: EndpointType): string {
  return endpoint === 'embeddings' ? '/v1/embeddings' : endpoint === 'openai-response' ? '/v1/responses' : '/v1/chat/completions';
}

/** Trimmed, non-empty, first occurrence kept. */
export function uniqueIds(ids: unknown[]): string[] {
  return [...new Set(ids.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter(Boolean))];
}

/** The `data[].id` list of an OpenAI-style model list. */
export function dataIds(body: unknown): unknown[] | null {
  const data = (body as { data?: unknown })?.data;
  return Array.isArray(data) ? data.map((m) => (m as { id?: unknown })?.id) : null;
}
