import { isObject, objectOf } from '../../../kit/json/object.js';
import { chatUsage, unixNow, usageCount, type ChatChunk, type ChatUsage, type FinishReason, type Json } from '../pivot.js';
import { UpstreamPayloadError, type StreamDecoder } from '../types.js';

/** Shared by the whole answer and the stream: Anthropic's stop reasons, usage and error bodies in chat terms. */

/** The id used when Anthropic's answer names none (a stream whose message_start never came). */
export const UNKNOWN_MESSAGE_ID = 'msg_unknown';

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function finishReason(stopReason: unknown): FinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}

/** Anthropic's input_tokens leave out the cached part of the prompt, which OpenAI's prompt_tokens include. */
export function usageToChat(usage: Json): ChatUsage {
  const cacheRead = usageCount(usage.cache_read_input_tokens);
  const prompt = usageCount(usage.input_tokens) + cacheRead + usageCount(usage.cache_creation_input_tokens);
  return chatUsage(prompt, usageCount(usage.output_tokens), cacheRead);
}

function errorStatus(type: string | null): number {
  if (type === 'overloaded_error') return 529;
  if (type === 'rate_limit_error') return 429;
  return 502;
}

/** The error of `{type: 'error', error: {type, message}}`, a whole body or a stream event. */
export function payloadError(body: Json): UpstreamPayloadError {
  const error = objectOf(body.error);
  const type = typeof error.type === 'string' ? error.type : null;
  const message = typeof error.message === 'string' && error.message ? error.message : 'Anthropic returned an error';
  return new UpstreamPayloadError(message, type, errorStatus(type));
}

type Delta = ChatChunk['choices'][number]['delta'];

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

/**
 * Reads Anthropic's SSE stream. The event name is repeated as `type` in every data payload, so `event:`
 * lines are skipped and only `data:` lines are read.
 */
export function anthropicStreamDecoder(model: string): StreamDecoder {
  const created = unixNow();
  let id = UNKNOWN_MESSAGE_ID;
  const usage: Json = {};
  let stopReason: unknown = null;
  let sawMessageDelta = false;
  let finished = false;
  /** Anthropic numbers every content block; OpenAI numbers only the tool calls. */
  const toolIndexOfBlock = new Map<number, number>();

  const chunk = (delta: Delta, finish: FinishReason = null): ChatChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  function finalChunks(): ChatChunk[] {
    finished = true;
    const usageChunk: ChatChunk = { id, object: 'chat.completion.chunk', created, model, choices: [], usage: usageToChat(usage) };
    return [chunk({}, finishReason(stopReason)), usageChunk];
  }

  /** message_start reports the input counts, message_delta the (cumulative) output count and sometimes input again. */
  function mergeUsage(source: Json): void {
    for (const key of USAGE_KEYS) if (source[key] !== undefined) usage[key] = source[key];
  }

  function blockStart(blockIndex: number, block: Json): ChatChunk[] {
    if (block.type !== 'tool_use') return []; // text and thinking blocks start empty
    const toolIndex = toolIndexOfBlock.size;
    toolIndexOfBlock.set(blockIndex, toolIndex);
    const name = typeof block.name === 'string' ? block.name : '';
    const callId = typeof block.id === 'string' ? block.id : '';
    return [chunk({ tool_calls: [{ index: toolIndex, id: callId, type: 'function', function: { name, arguments: '' } }] })];
  }

  function blockDelta(blockIndex: number, delta: Json): ChatChunk[] {
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text) return [chunk({ content: delta.text })];
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking) return [chunk({ reasoning_content: delta.thinking })];
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json) {
      const toolIndex = toolIndexOfBlock.get(blockIndex);
      if (toolIndex === undefined) return [];
      return [chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })];
    }
    return []; // signature_delta, citations_delta, empty deltas
  }

  function event(data: Json): ChatChunk[] {
    switch (data.type) {
      case 'message_start': {
        const message = objectOf(data.message);
        if (typeof message.id === 'string') id = message.id;
        mergeUsage(objectOf(message.usage));
        return [chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start':
        return blockStart(count(data.index), objectOf(data.content_block));
      case 'content_block_delta':
        return blockDelta(count(data.index), objectOf(data.delta));
      case 'message_delta':
        sawMessageDelta = true;
        stopReason = objectOf(data.delta).stop_reason ?? stopReason;
        mergeUsage(objectOf(data.usage));
        return [];
      case 'message_stop':
        return finalChunks();
      case 'error':
        throw payloadError(data);
      default: // ping, content_block_stop, events added later
        return [];
    }
  }

  return {
    line(line) {
      if (finished || !line.startsWith('data:')) return [];
      const payload = line.slice('data:'.length).trim();
      if (!payload) return [];
      let data: unknown;
      try {
        data = JSON.parse(payload);
      } catch {
        throw new UpstreamPayloadError('Anthropic sent a stream event that is not JSON');
      }
      return isObject(data) ? event(data) : [];
    },
    end() {
      return sawMessageDelta && !finished ? finalChunks() : [];
    },
    reported: () => (Object.keys(usage).length ? usageToChat(usage) : null),
  };
}
