import { isObject, objectOf } from '../../../kit/json/object.js';
import type { StreamReader } from './stream-reader.js';
import { showGeminiUsage, showMessagesUsage, upstreamUsageShown, type UsageShown } from './shown-usage.js';
import { anthropicErrorEvent } from '../wire/anthropic-caller-stream.js';
import { payloadError, usageToChat } from '../../providers/anthropic/stream.js';
import { geminiErrorEvent } from '../wire/gemini-caller-stream.js';
import { geminiPayload, usageOf, type GeminiResponse } from '../../providers/gemini/stream.js';
import { type ChatUsage, type Json } from '../../providers/pivot.js';
import { UpstreamPayloadError } from '../../providers/types.js';

/**
 * Streams passed through when the channel speaks the caller's format (an Anthropic channel for an Anthropic
 * caller, a Gemini channel for a Gemini caller): each line goes out as it came, and is read on the way for
 * output, the proper end, usage, text and error events. An event whose usage the relay replaces (`shown`)
 * goes out re-written with the billed counts.
 */

function parse(line: string, family: string): unknown {
  try {
    return JSON.parse(line.slice(5));
  } catch {
    throw new UpstreamPayloadError(`${family} sent a stream event that is not JSON`);
  }
}

/**
 * What the readers share: the lines pass through (or the event `read` re-wrote, in its place), and an error
 * ending starts on a fresh event (after a cut inside an event, its blank line first, so the error's data is
 * not glued to the broken event's).
 */
function passThrough(read: (data: unknown) => Json | void, errorEvent: (message: string) => string, family: string) {
  let open = false;
  return {
    line(line: string): string {
      const rewritten = line.startsWith('data:') && line.slice(5).trim() ? read(parse(line, family)) : undefined;
      open = line.trim() !== '';
      return rewritten ? `data: ${JSON.stringify(rewritten)}\n` : line + '\n';
    },
    fail: (message: string) => (open ? '\n' : '') + errorEvent(message),
  };
}

const USAGE_KEYS = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'] as const;

/** Anthropic's Messages stream: usage from message_start and (cumulative) message_delta; message_stop ends it. */
export function nativeMessagesReader(shown: UsageShown = upstreamUsageShown): StreamReader {
  let output = false;
  let finished = false;
  const usage: Json = {};
  const text: string[] = [];
  const merge = (source: Json) => {
    for (const key of USAGE_KEYS) if (source[key] !== undefined) usage[key] = source[key];
  };
  /** The event with the billed usage in `holder` when the usage so far is replaced, else nothing. */
  const billedIn = (event: Json, holder: Json): Json | void => {
    const billed = shown(usageToChat(usage), () => text.join(''));
    if (!billed) return;
    showMessagesUsage(holder, billed, usage);
    return event;
  };
  const lines = passThrough(
    (data) => {
      const event = objectOf(data);
      if (event.type === 'error') throw payloadError(event);
      if (event.type === 'message_start' && isObject(event.message) && isObject(event.message.usage)) {
        merge(event.message.usage);
        return billedIn(event, event.message);
      }
      if (event.type === 'content_block_start' && objectOf(event.content_block).type === 'tool_use') text.push(String(objectOf(event.content_block).name ?? ''));
      if (event.type === 'content_block_delta') {
        output = true;
        const delta = objectOf(event.delta);
        for (const key of ['text', 'thinking', 'partial_json']) if (typeof delta[key] === 'string') text.push(delta[key] as string);
      }
      if (event.type === 'message_delta') {
        output = true;
        if (isObject(event.usage)) {
          merge(event.usage);
          return billedIn(event, event);
        }
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
export function nativeGenerateContentReader(shown: UsageShown = upstreamUsageShown): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  const lines = passThrough(
    (data) => {
      const event = geminiPayload(isObject(data) ? data : null) as GeminiResponse;
      if (event.promptFeedback?.blockReason) output = finished = true;
      for (const candidate of event.candidates ?? []) {
        for (const part of candidate.content?.parts ?? []) {
          if (typeof part.text === 'string' && part.text) text.push(part.text);
          if (part.functionCall) text.push(String(part.functionCall.name ?? '') + JSON.stringify(part.functionCall.args ?? {}));
          if (part.text || part.functionCall) output = true;
        }
        if (candidate.finishReason) output = finished = true;
      }
      if (!event.usageMetadata) return;
      usage = usageOf(event.usageMetadata);
      // Gemini sends usage in every event: each one replaced is re-written, the count of the text so far.
      const billed = shown(usage, () => text.join(''));
      if (!billed) return;
      showGeminiUsage(event as Json, billed);
      return event as Json;
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
