import type { StreamReader } from './readers.js';
import { anthropicErrorEvent } from './wire/anthropic-caller-stream.js';
import { isObject, objectOf, payloadError, usageToChat } from './wire/anthropic-stream.js';
import { geminiErrorEvent } from './wire/gemini-caller-stream.js';
import { geminiPayload, usageOf, type GeminiResponse } from './wire/gemini-stream.js';
import { UpstreamPayloadError, type ChatUsage, type Json } from './wire/types.js';

/**
 * Streams passed through when the channel speaks the caller's format (an Anthropic channel for an Anthropic
 * caller, a Gemini channel for a Gemini caller): each line goes out as it came, and is read on the way for
 * output, the proper end, usage, text and error events.
 */

function parse(line: string, family: string): unknown {
  try {
    return JSON.parse(line.slice(5));
  } catch {
    throw new UpstreamPayloadError(`${family} sent a stream event that is not JSON`);
  }
}

/**
 * What the readers share: the lines pass through, and an error ending starts on a fresh event (after a cut
 * inside an event, its blank line first, so the error's data is not glued to the broken event's).
 */
function passThrough(read: (data: unknown) => void, errorEvent: (message: string) => string, family: string) {
  let open = false;
  return {
    line(line: string): string {
      if (line.startsWith('data:') && line.slice(5).trim()) read(parse(line, family));
      open = line.trim() !== '';
      return line + '\n';
    },
    fail: (message: string) => (open ? '\n' : '') + errorEvent(message),
  };
}

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

/** Anthropic's Messages stream: usage from message_start and (cumulative) message_delta; message_stop ends it. */
export function nativeMessagesReader(): StreamReader {
  let output = false;
  let finished = false;
  const usage: Json = {};
  const text: string[] = [];
  const merge = (source: Json) => {
    for (const key of USAGE_KEYS) if (source[key] !== undefined) usage[key] = source[key];
  };
  const lines = passThrough(
    (data) => {
      const event = objectOf(data);
      if (event.type === 'error') throw payloadError(event);
      if (event.type === 'message_start') merge(objectOf(objectOf(event.message).usage));
      if (event.type === 'content_block_start' && objectOf(event.content_block).type === 'tool_use') text.push(String(objectOf(event.content_block).name ?? ''));
      if (event.type === 'content_block_delta') {
        output = true;
        const delta = objectOf(event.delta);
        for (const key of ['text', 'thinking', 'partial_json']) if (typeof delta[key] === 'string') text.push(delta[key] as string);
      }
      if (event.type === 'message_delta') {
        output = true;
        merge(objectOf(event.usage));
      }
      if (event.type === 'message_stop') output = finished = true;
    },
    anthropicErrorEvent,
    'Anthropic',
  );
  return {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    line: lines.line,
    end: () => '',
    fail: lines.fail,
    usage: (): ChatUsage | null => (Object.keys(usage).length ? usageToChat(usage) : null),
    text: () => text.join(''),
  };
}

/** Gemini's `alt=sse` stream: every event a GenerateContentResponse; a finishReason (or a blocked prompt) ends it. */
export function nativeGenerateContentReader(): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  const lines = passThrough(
    (data) => {
      const event = geminiPayload(isObject(data) ? data : null) as GeminiResponse;
      if (event.usageMetadata) usage = usageOf(event.usageMetadata);
      if (event.promptFeedback?.blockReason) output = finished = true;
      for (const candidate of event.candidates ?? []) {
        for (const part of candidate.content?.parts ?? []) {
          if (typeof part.text === 'string' && part.text) text.push(part.text);
          if (part.functionCall) text.push(String(part.functionCall.name ?? '') + JSON.stringify(part.functionCall.args ?? {}));
          if (part.text || part.functionCall) output = true;
        }
        if (candidate.finishReason) output = finished = true;
      }
    },
    geminiErrorEvent,
    'Gemini',
  );
  return {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    line: lines.line,
    end: () => '',
    fail: lines.fail,
    usage: () => usage,
    text: () => text.join(''),
  };
}
