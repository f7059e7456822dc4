import { isObject, listOf, stringOf } from '../../../../kit/json/object.js';
import { contentText, type ChatCompletion, type ChatUsage, type FinishReason, type Json } from '../../../providers/pivot.js';
import { openaiStreamDecoder, payloadError } from '../../../providers/openai/relay.js';
import { UpstreamPayloadError } from '../../../providers/types.js';
import { chatEncoder } from '../chat/index.js';
import { showChatUsage, upstreamUsageShown, type UsageShown } from '../shown-usage.js';
import type { ChunkEncoder, StreamReader } from '../stream-reader.js';

/** A legacy completion's objects: a chat completion (or chunk) as a `text_completion`, and the native answers read. */

/** Completions know three finish reasons; a tool call (which a prompt never asks for) ends the text as a stop. */
function finishReason(f: FinishReason | undefined): string | null {
  if (f === 'tool_calls') return 'stop';
  return f ?? null;
}

/** `cmpl-` and the upstream's id without its chat prefix. */
const completionId = (id: unknown) => `cmpl-${stringOf(id).replace(/^chatcmpl-/, '') || Date.now().toString(36)}`;

export function chatToCompletion(c: ChatCompletion): Json {
  const choices = c.choices.map((ch) => ({ text: contentText(ch.message.content ?? ''), index: ch.index, logprobs: null, finish_reason: finishReason(ch.finish_reason) }));
  return { id: completionId(c.id), object: 'text_completion', created: c.created, model: c.model, choices, ...(c.usage ? { usage: c.usage } : {}) };
}

/**
 * Chat chunks as a completions stream: `text_completion` chunks and `data: [DONE]`. A chunk with neither
 * text nor finish reason (the role chunk) is left out; the usage chunk goes out only when the caller asked.
 */
export function completionsStream(includeUsage: boolean): ChunkEncoder {
  const chat = chatEncoder(includeUsage);
  return {
    chunk(c) {
      const choices = (c.choices ?? [])
        .filter((ch) => ch.delta?.content || ch.finish_reason)
        .map((ch) => ({ text: ch.delta?.content ?? '', index: ch.index, logprobs: null, finish_reason: finishReason(ch.finish_reason) }));
      const usage = includeUsage && c.usage ? { usage: c.usage } : {};
      if (!choices.length && !('usage' in usage)) return '';
      return `data: ${JSON.stringify({ id: completionId(c.id), object: 'text_completion', created: c.created, model: c.model, choices, ...usage })}\n\n`;
    },
    end: chat.end,
    error: chat.error,
  };
}

/** Whether the caller asked a stream for its usage chunk. */
export const asksUsage = (request: Json) => isObject(request.stream_options) && request.stream_options.include_usage === true;

const textOf = (choices: Json[]) => choices.map((ch) => stringOf(ch.text)).join('');

/** Usage and text of a native `text_completion` (OpenAI-compatible, Azure); an error body throws (retried elsewhere). */
export function nativeCompletionAnswer(json: unknown): { usage: ChatUsage | null; text: string } {
  const error = payloadError(json);
  if (error) throw error;
  const body = json as { choices?: unknown; usage?: unknown };
  if (!Array.isArray(body?.choices)) throw new UpstreamPayloadError('the answer has no choices');
  return { usage: isObject(body.usage) ? (body.usage as unknown as ChatUsage) : null, text: textOf(listOf(body.choices)) };
}

/**
 * A native completions stream passed through chunk by chunk, read for text, finish and usage. The upstream is
 * always asked for usage: the usage chunk reaches the caller only when it asked, with the billed counts when
 * the relay replaced the upstream's (`shown`). The upstream's `[DONE]` is written by end(); the stream is
 * finished once a choice has its finish reason.
 */
export function nativeCompletionsReader(shown: UsageShown = upstreamUsageShown, includeUsage = false): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  const chat = chatEncoder(includeUsage);
  const decoder = openaiStreamDecoder();
  return {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    line(line) {
      // Completion chunks are framed as chat chunks are: the chat decoder parses them and throws on errors.
      const [chunk] = decoder.line(line) as unknown as Json[];
      if (!chunk) return '';
      const choices = listOf(chunk.choices);
      for (const ch of choices) {
        const piece = stringOf(ch.text);
        if (piece) text.push(piece);
        if (piece || ch.finish_reason) output = true;
        if (ch.finish_reason) finished = true;
      }
      if (isObject(chunk.usage)) {
        usage = chunk.usage as unknown as ChatUsage;
        if (!choices.length && !includeUsage) return '';
        const billed = shown(usage, () => text.join(''));
        if (billed) {
          showChatUsage(chunk, billed);
          return `data: ${JSON.stringify(chunk)}\n\n`;
        }
      }
      return `data: ${line.slice(5).trim()}\n\n`;
    },
    end: chat.end,
    fail: chat.error,
    usage: () => usage,
    text: () => text.join(''),
  };
}
