import { isObject, objectOf, stringOf } from '../../../../kit/json/object.js';
import { payloadError, usageToChat } from '../../../providers/anthropic/stream.js';
import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { passThrough } from '../native-stream.js';
import { upstreamUsageShown, type UsageShown } from '../shown-usage.js';
import type { StreamReader } from '../stream-reader.js';
import { showMessagesUsage } from './answer.js';
import { anthropicErrorEvent } from './stream.js';

/** The answers of an Anthropic channel to an Anthropic caller, passed through and read for usage, text and errors. */

/** Usage and text of a native `message` answer; an error body throws (retried elsewhere). */
export function nativeMessagesAnswer(json: unknown): { usage: ChatUsage | null; text: string } {
  const body = objectOf(json);
  if (body.type === 'error' || isObject(body.error)) throw payloadError(body);
  const blocks = Array.isArray(body.content) ? body.content.map(objectOf) : [];
  const text = blocks.map((b) => stringOf(b.text) + stringOf(b.thinking) + (b.type === 'tool_use' ? stringOf(b.name) + JSON.stringify(b.input ?? {}) : '')).join('');
  return { usage: isObject(body.usage) ? usageToChat(body.usage) : null, text };
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
