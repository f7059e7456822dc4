import { openaiHeaders } from '../../upstream/adapters/openai.js';
import { azureApiVersion, azureHeaders } from '../../upstream/adapters/azure.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { UpstreamPayloadError, type ChatBody, type ChatChunk, type ChatCompletion, type Dialect, type EmbeddingsBody, type EmbeddingsResult, type Json, type StreamDecoder, type UpstreamCall } from './types.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/** An `error` in a 200 body or stream event (some compatible upstreams answer errors that way). */
export function payloadError(value: unknown): UpstreamPayloadError | null {
  const err = (value as { error?: unknown } | null)?.error;
  if (!err) return null;
  if (typeof err === 'string') return new UpstreamPayloadError(err);
  if (typeof err !== 'object') return null;
  const e = err as { message?: unknown; code?: unknown; type?: unknown };
  const code = typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : null;
  return new UpstreamPayloadError(typeof e.message === 'string' ? e.message : 'the upstream reported an error', code);
}

/** Chat streams ask for the usage chunk; the relay needs it to bill. */
export function chatUpstreamBody(body: ChatBody, stream: boolean): Json {
  if (!stream) return { ...body, stream: false };
  const options = (body.stream_options && typeof body.stream_options === 'object' ? body.stream_options : {}) as Json;
  return { ...body, stream: true, stream_options: { ...options, include_usage: true } };
}

/** Lines of an OpenAI-style SSE stream: `data: {chunk}` until `data: [DONE]`. */
export function openaiStreamDecoder(): StreamDecoder {
  return {
    line(line) {
      if (!line.startsWith('data:')) return [];
      const data = line.slice(5).trim();
      if (data === '' || data === '[DONE]') return [];
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch {
        throw new UpstreamPayloadError('a stream event is not JSON');
      }
      const err = payloadError(value);
      if (err) throw err;
      return [value as ChatChunk];
    },
    end: () => [],
  };
}

function completion(json: unknown): ChatCompletion {
  const err = payloadError(json);
  if (err) throw err;
  if (!json || typeof json !== 'object' || !Array.isArray((json as { choices?: unknown }).choices)) throw new UpstreamPayloadError('the answer has no choices');
  return json as ChatCompletion;
}

function embeddingsResult(json: unknown): EmbeddingsResult {
  const err = payloadError(json);
  if (err) throw err;
  if (!json || typeof json !== 'object' || !Array.isArray((json as { data?: unknown }).data)) throw new UpstreamPayloadError('the answer has no data');
  return json as EmbeddingsResult;
}

/** OpenAI and the OpenAI-compatible types: the pivot format itself, so requests and answers pass unchanged. */
export const openaiDialect: Dialect = {
  family: 'openai',
  chat: (t, body, stream) => ({ url: `${t.baseUrl}/v1/chat/completions`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody(body, stream) }),
  chatResult: completion,
  chatStream: openaiStreamDecoder,
  embeddings: (t, body) => ({ url: `${t.baseUrl}/v1/embeddings`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body }),
  embeddingsResult,
};

function azureUrl(t: UpstreamTarget, model: string, path: 'chat/completions' | 'embeddings'): string {
  return `${t.baseUrl}/openai/deployments/${encodeURIComponent(model)}/${path}?api-version=${encodeURIComponent(azureApiVersion(t))}`;
}

/** Azure OpenAI: the deployment named like the (mapped) model, `api-key` header; bodies as OpenAI's. */
export const azureDialect: Dialect = {
  family: 'azure',
  chat: (t, body, stream) => ({ url: azureUrl(t, body.model, 'chat/completions'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody(body, stream) }),
  chatResult: completion,
  chatStream: openaiStreamDecoder,
  embeddings: (t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall => ({ url: azureUrl(t, body.model, 'embeddings'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body }),
  embeddingsResult,
};

/** Where an OpenAI or Azure channel takes a native Responses request (the relay passes those through). */
export function responsesCall(t: UpstreamTarget, family: 'openai' | 'azure', body: Json): UpstreamCall {
  if (family === 'openai') return { url: `${t.baseUrl}/v1/responses`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body };
  const version = typeof t.settings.azure_responses_version === 'string' && t.settings.azure_responses_version ? t.settings.azure_responses_version : 'preview';
  return { url: `${t.baseUrl}/openai/responses?api-version=${encodeURIComponent(version)}`, headers: { ...azureHeaders(t), ...JSON_HEADERS }, body };
}
