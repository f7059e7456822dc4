import { randomUUID } from 'node:crypto';
import { isObject, jsonObject, objectOf } from '../../../kit/json/object.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { chatUsage, usageCount, contentText, unixNow, type ChatBody, type ChatChunk, type ChatCompletion, type ChatMessage, type ChatUsage, type EmbeddingsBody, type EmbeddingsResult, type FinishReason, type Json, type ToolCall } from '../pivot.js';
import { UpstreamPayloadError, type ProviderRelay, type StreamDecoder, type UpstreamCall, UnsupportedByChannel } from '../types.js';
import { jsonHeaders } from './api.js';

/** Ollama's native API (`/api/chat`, `/api/embed`): NDJSON streams, tool arguments as objects, counts instead of usage. */

const randomId = (prefix: string) => prefix + randomUUID().replaceAll('-', '').slice(0, 24);

// ---- request ----

const DATA_URL = /^data:[^,]*;base64,(.*)$/s;

/** Ollama takes images only as base64 data: an http(s) link cannot be sent and is dropped. */
function inlineImages(content: ChatMessage['content']): string[] {
  if (!Array.isArray(content)) return [];
  const images: string[] = [];
  for (const part of content) {
    if (part.type !== 'image_url') continue;
    const url = typeof part.image_url === 'string' ? part.image_url : String(objectOf(part.image_url).url ?? '');
    const inline = DATA_URL.exec(url);
    if (inline) images.push(inline[1]);
  }
  return images;
}

/** Ollama's tool arguments are an object: arguments that are not a JSON object become `{}`. */
function toolCallsOut(calls: ToolCall[]): Json[] {
  return calls.map((call) => ({ function: { name: call.function?.name ?? '', arguments: jsonObject(call.function?.arguments) } }));
}

/** Tool results name their tool (`tool_name`), which Ollama learns from the assistant call they answer. */
function convertMessages(messages: ChatMessage[]): Json[] {
  const toolNameOfCall = new Map<string, string>();
  return messages.map((message) => {
    const out: Json = { role: message.role === 'developer' ? 'system' : message.role, content: contentText(message.content) };
    const images = inlineImages(message.content);
    if (images.length > 0) out.images = images;
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      for (const call of message.tool_calls) if (call.id && call.function?.name) toolNameOfCall.set(call.id, call.function.name);
      out.tool_calls = toolCallsOut(message.tool_calls);
    }
    if (message.role === 'tool') {
      const name = toolNameOfCall.get(message.tool_call_id ?? '') ?? message.name;
      if (name) out.tool_name = name;
    }
    return out;
  });
}

function stopList(stop: unknown): string[] {
  if (typeof stop === 'string') return stop ? [stop] : [];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s !== '') : [];
}

const SAME_NAME_OPTIONS = ['temperature', 'top_p', 'top_k', 'seed', 'presence_penalty', 'frequency_penalty'];

function modelOptions(body: ChatBody): Json {
  const options: Json = {};
  for (const key of SAME_NAME_OPTIONS) if (typeof body[key] === 'number') options[key] = body[key];
  const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : body.max_completion_tokens;
  if (typeof maxTokens === 'number') options.num_predict = maxTokens;
  const stop = stopList(body.stop);
  if (stop.length > 0) options.stop = stop;
  return options;
}

/** `json` for JSON mode, the schema itself for structured output. */
function outputFormat(responseFormat: unknown): unknown {
  const format = objectOf(responseFormat);
  if (format.type === 'json_object') return 'json';
  if (format.type === 'json_schema') {
    const schema = objectOf(format.json_schema).schema;
    return isObject(schema) ? schema : 'json';
  }
  return undefined;
}

function chatRequest(body: ChatBody, stream: boolean): Json {
  const out: Json = { model: body.model, messages: convertMessages(body.messages) };
  const tools = Array.isArray(body.tools) ? body.tools.filter((tool) => isObject(tool) && tool.type === 'function' && isObject(tool.function)) : [];
  if (tools.length > 0) out.tools = tools;
  const format = outputFormat(body.response_format);
  if (format !== undefined) out.format = format;
  const options = modelOptions(body);
  if (Object.keys(options).length > 0) out.options = options;
  if (typeof body.reasoning_effort === 'string' && body.reasoning_effort) out.think = body.reasoning_effort !== 'none';
  // Ollama streams unless told otherwise.
  out.stream = stream;
  return out;
}

// ---- answers ----

function throwIfError(body: Json): void {
  if (body.error === undefined || body.error === null) return;
  const message = typeof body.error === 'string' && body.error ? body.error : 'Ollama returned an error';
  throw new UpstreamPayloadError(message, null, 502);
}

/** `created_at` is RFC 3339 with nanoseconds; the time of reading when it is missing or unreadable. */
function createdOf(createdAt: unknown): number {
  const ms = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : unixNow();
}

/** done_reason is `stop`, `length`, or `load`/`unload` for requests without messages; old servers leave it out. */
function finishReason(doneReason: unknown, hasToolCalls: boolean): FinishReason {
  if (doneReason === 'length') return 'length';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

const usageOf = (body: Json): ChatUsage => chatUsage(usageCount(body.prompt_eval_count), usageCount(body.eval_count));

/** Recent servers give each call an id; older ones none, so one is made up. */
function toolCallsIn(calls: unknown): ToolCall[] {
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).map((call) => {
    const fn = objectOf(call.function);
    const id = typeof call.id === 'string' && call.id ? call.id : randomId('call_');
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return { id, type: 'function', function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: args } };
  });
}

function chatResult(json: unknown, model: string): ChatCompletion {
  if (!isObject(json)) throw new UpstreamPayloadError('Ollama returned a body that is not a JSON object');
  throwIfError(json);
  const reply = objectOf(json.message);
  const toolCalls = toolCallsIn(reply.tool_calls);
  const text = typeof reply.content === 'string' ? reply.content : '';
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (typeof reply.thinking === 'string' && reply.thinking) message.reasoning_content = reply.thinking;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: createdOf(json.created_at),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(json.done_reason, toolCalls.length > 0) }],
    usage: usageOf(json),
  };
}

type Delta = ChatChunk['choices'][number]['delta'];

/**
 * Reads Ollama's NDJSON stream: each line is a piece of the message, the last one has `done: true` and the
 * counts. Tool calls arrive whole, each in one line.
 */
function ollamaStreamDecoder(model: string): StreamDecoder {
  const id = randomId('chatcmpl-');
  let created = 0;
  let started = false;
  let finished = false;
  let toolCallCount = 0;

  const chunk = (delta: Delta, finish: FinishReason = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  function messageDelta(message: Json): Delta {
    const delta: Delta = {};
    if (typeof message.content === 'string' && message.content) delta.content = message.content;
    if (typeof message.thinking === 'string' && message.thinking) delta.reasoning_content = message.thinking;
    const calls = toolCallsIn(message.tool_calls);
    if (calls.length > 0) delta.tool_calls = calls.map((call) => ({ index: toolCallCount++, ...call }));
    return delta;
  }

  function piece(data: Json): ChatChunk[] {
    const delta = messageDelta(objectOf(data.message));
    const out: ChatChunk[] = [];
    if (!started) {
      started = true;
      created = createdOf(data.created_at);
      out.push(chunk({ role: 'assistant', content: '', ...delta }));
    } else if (Object.keys(delta).length > 0) {
      out.push(chunk(delta));
    }
    if (data.done === true) {
      finished = true;
      out.push(chunk({}, finishReason(data.done_reason, toolCallCount > 0)));
      out.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageOf(data) });
    }
    return out;
  }

  return {
    line(line) {
      const text = line.trim();
      if (finished || !text) return [];
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        throw new UpstreamPayloadError('Ollama sent a stream line that is not JSON');
      }
      if (!isObject(data)) return [];
      throwIfError(data);
      return piece(data);
    },
    // Without a `done` line the stream was cut off; the relay reports that itself.
    end: () => [],
  };
}

// ---- embeddings ----

function embeddingsCall(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall {
  if (Array.isArray(body.input) && body.input.some((item) => typeof item !== 'string')) {
    throw new UnsupportedByChannel('token arrays are not supported by this upstream');
  }
  const out: Json = { model: body.model, input: body.input, truncate: true };
  if (typeof body.dimensions === 'number') out.dimensions = body.dimensions;
  return { url: `${t.baseUrl}/api/embed`, headers: jsonHeaders(t), body: out };
}

function embeddingsResult(json: unknown, model: string): EmbeddingsResult {
  if (!isObject(json)) throw new UpstreamPayloadError('Ollama returned a body that is not a JSON object');
  throwIfError(json);
  if (!Array.isArray(json.embeddings) || !json.embeddings.every(Array.isArray)) throw new UpstreamPayloadError('the answer has no embeddings');
  const promptTokens = usageCount(json.prompt_eval_count);
  return {
    object: 'list',
    data: (json.embeddings as number[][]).map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** The relay's calls: chat and embeddings converted from and to the internal form. */
export const ollamaRelay: ProviderRelay = {
  chat: (t, body, stream) => ({ url: `${t.baseUrl}/api/chat`, headers: jsonHeaders(t), body: chatRequest(body, stream) }),
  chatResult,
  chatStream: ollamaStreamDecoder,
  embeddings: embeddingsCall,
  embeddingsResult,
  native: {},
};
