import type { RelayFile } from '../../../contract/relay.js';
import { FormData, formDataOf } from '../../../kit/http/multipart.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { type ChatBody, type ChatChunk, type ChatCompletion, type EmbeddingsBody, type EmbeddingsResult, type Json } from '../pivot.js';
import { UnsupportedByChannel, UpstreamPayloadError, type ProviderRelay, type StreamDecoder, type UpstreamCall } from '../types.js';
import { JSON_HEADERS, mediaHeaders, openaiHeaders } from './api.js';

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

/** Chat and completions streams ask for the usage chunk; the relay needs it to bill. */
export function chatUpstreamBody(body: Json, stream: boolean): Json {
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

/** A whole chat completion as it came; an `error` body throws. */
export function completion(json: unknown): ChatCompletion {
  const err = payloadError(json);
  if (err) throw err;
  if (!json || typeof json !== 'object' || !Array.isArray((json as { choices?: unknown }).choices)) throw new UpstreamPayloadError('the answer has no choices');
  return json as ChatCompletion;
}

/** An embeddings list as it came; an `error` body throws. */
export function embeddingsResult(json: unknown): EmbeddingsResult {
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

/** A JSON request to an OpenAI-style path of the channel's base URL. */
function openaiCall(t: UpstreamTarget, path: string, body: Json): UpstreamCall {
  return { url: `${t.baseUrl}${path}`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body };
}

/** Moonshot, Mistral, DeepSeek and xAI: the reference's adaptors of these vendors send no rerank. */
const NO_RERANK = new Set([25, 42, 43, 48]);

function openaiRerank(t: UpstreamTarget, body: Json, model: string): UpstreamCall {
  if (NO_RERANK.has(t.type)) throw new UnsupportedByChannel(`channel type ${t.type} serves no rerank`, 'this model serves no rerank');
  return openaiCall(t, '/v1/rerank', { ...body, model });
}

/** A channel that serves no such media call: refused before any request (relay_unsupported_endpoint when no channel of the model does). */
export function unsupportedMedia(t: UpstreamTarget, what: string): UnsupportedByChannel {
  return new UnsupportedByChannel(`channel type ${t.type} serves no ${what}`, `no channel of this model serves ${what} (OpenAI-compatible and Azure OpenAI channels do)`, 'relay_unsupported_endpoint');
}

/** Mistral and DeepSeek: the reference's adaptors send no image request; those, Moonshot and xAI no audio. */
const NO_IMAGES = new Set([42, 43]);
const NO_AUDIO = new Set([25, 42, 43, 48]);

/** A media call to an OpenAI-style path, unless the channel's vendor has no such endpoint. */
function mediaCall(t: UpstreamTarget, path: '/v1/images/generations' | '/v1/audio/speech' | '/v1/audio/transcriptions', body: unknown): UpstreamCall {
  const images = path === '/v1/images/generations';
  if ((images ? NO_IMAGES : NO_AUDIO).has(t.type)) throw unsupportedMedia(t, images ? 'image generation' : 'audio');
  return { url: `${t.baseUrl}${path}`, headers: images ? { ...openaiHeaders(t), ...JSON_HEADERS } : mediaHeaders(openaiHeaders(t), body instanceof FormData ? 'form' : 'json'), body };
}

/** A multipart call's form as the upstream gets it: the caller's fields with the upstream's model, the files unchanged. */
export function mediaForm(body: Json, model: string, files: readonly RelayFile[] = []) {
  return formDataOf({ ...body, model }, files);
}

/** OpenAI and the OpenAI-compatible types: the pivot format itself, so requests and answers pass unchanged. */
export const openaiRelay: ProviderRelay = {
  chat: openaiChat,
  chatResult: completion,
  chatStream: openaiStreamDecoder,
  embeddings: openaiEmbeddings,
  embeddingsResult,
  native: {
    chat: (t, body, model, stream) => openaiChat(t, { ...body, model } as ChatBody, stream),
    responses: (t, body, model) => ({ url: `${t.baseUrl}/v1/responses`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body: { ...body, model } }),
    embeddings: (t, body, model) => openaiEmbeddings(t, { ...body, model } as EmbeddingsBody),
    completions: (t, body, model, stream) => openaiCall(t, '/v1/completions', chatUpstreamBody({ ...body, model }, stream)),
    moderations: (t, body, model) => openaiCall(t, '/v1/moderations', { ...body, model }),
    rerank: openaiRerank,
    images: (t, body, model) => mediaCall(t, '/v1/images/generations', { ...body, model }),
    speech: (t, body, model) => mediaCall(t, '/v1/audio/speech', { ...body, model }),
    transcriptions: (t, body, model, _stream, _vendor, files) => mediaCall(t, '/v1/audio/transcriptions', mediaForm(body, model, files)),
  },
};
