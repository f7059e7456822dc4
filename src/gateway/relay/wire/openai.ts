import { openaiHeaders } from '../../upstream/adapters/openai.js';
import { azureApiVersion, azureHeaders } from '../../upstream/adapters/azure.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { type ChatBody, type ChatChunk, type ChatCompletion, type EmbeddingsBody, type EmbeddingsResult, type Json } from '../../providers/pivot.js';
import { UpstreamPayloadError, type ProviderRelay, type StreamDecoder, type UpstreamCall } from '../../providers/types.js';

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

function openaiChat(t: UpstreamTarget, body: ChatBody, stream: boolean): UpstreamCall {
  return { url: `${t.baseUrl}/v1/chat/completions`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody(body, stream) };
}

function openaiEmbeddings(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall {
  return { url: `${t.baseUrl}/v1/embeddings`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body };
}

/** OpenAI and the OpenAI-compatible types: the pivot format itself, so requests and answers pass unchanged. */
export const openaiDialect: ProviderRelay = {
  chat: openaiChat,
  chatResult: completion,
  chatStream: openaiStreamDecoder,
  embeddings: openaiEmbeddings,
  embeddingsResult,
  native: {
    chat: (t, body, model, stream) => openaiChat(t, { ...body, model } as ChatBody, stream),
    responses: (t, body, model) => ({ url: `${t.baseUrl}/v1/responses`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body: { ...body, model } }),
    embeddings: (t, body, model) => openaiEmbeddings(t, { ...body, model } as EmbeddingsBody),
  },
};

function azureUrl(t: UpstreamTarget, model: string, path: 'chat/completions' | 'embeddings'): string {
  return `${t.baseUrl}/openai/deployments/${encodeURIComponent(model)}/${path}?api-version=${encodeURIComponent(azureApiVersion(t))}`;
}

function azureChat(t: UpstreamTarget, body: ChatBody, stream: boolean): UpstreamCall {
  return { url: azureUrl(t, body.model, 'chat/completions'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody(body, stream) };
}

function azureEmbeddings(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall {
  return { url: azureUrl(t, body.model, 'embeddings'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body };
}

/** Where an Azure channel takes a native Responses request: the resource's, with the channel's azure_responses_version. */
function azureResponses(t: UpstreamTarget, body: Json): UpstreamCall {
  const version = typeof t.settings.azure_responses_version === 'string' && t.settings.azure_responses_version ? t.settings.azure_responses_version : 'preview';
  return { url: `${t.baseUrl}/openai/responses?api-version=${encodeURIComponent(version)}`, headers: { ...azureHeaders(t), ...JSON_HEADERS }, body };
}

/** Azure OpenAI: the deployment named like the (mapped) model, `api-key` header; bodies as OpenAI's. */
export const azureDialect: ProviderRelay = {
  chat: azureChat,
  chatResult: completion,
  chatStream: openaiStreamDecoder,
  embeddings: azureEmbeddings,
  embeddingsResult,
  native: {
    chat: (t, body, model, stream) => azureChat(t, { ...body, model } as ChatBody, stream),
    responses: (t, body, model) => azureResponses(t, { ...body, model }),
    embeddings: (t, body, model) => azureEmbeddings(t, { ...body, model } as EmbeddingsBody),
  },
};
