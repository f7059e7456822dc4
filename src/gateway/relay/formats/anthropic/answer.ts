import { randomBytes } from 'node:crypto';
import { jsonObject, objectOf, stringOf } from '../../../../kit/json/object.js';
import { contentText, type ChatCompletion, type ChatUsage, type FinishReason, type Json } from '../../../providers/pivot.js';
import { merge } from '../shown-usage.js';

/** A chat completion as a Messages `message`, and the usage of one; the stream encoder shares the pieces. */

/** Makes message ids when the upstream gave none; tests pass a predictable one. */
export type MessageIds = () => string;
export const randomMessageId: MessageIds = () => `msg_${randomBytes(12).toString('hex')}`;

/** Chat has no stop_sequence reason (a stop sequence reads as "stop"): it is end_turn here. */
export function stopReasonOf(finish: FinishReason | undefined, calledTools: boolean): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls' || calledTools) return 'tool_use';
  if (finish === 'content_filter') return 'refusal';
  return 'end_turn';
}

/** Anthropic's input_tokens leave out the part of the prompt read from the cache. */
export function messagesUsageOf(u: ChatUsage | null | undefined): Json {
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  return { input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - cached), cache_read_input_tokens: cached, output_tokens: u?.completion_tokens ?? 0 };
}

/** `msg_` and the upstream's id without its chat prefix, so the same answer keeps a recognisable id. */
export function messageIdOf(completionId: unknown, ids: MessageIds): string {
  if (typeof completionId !== 'string' || !completionId) return ids();
  return completionId.startsWith('msg_') ? completionId : `msg_${completionId.replace(/^chatcmpl-/, '')}`;
}

/** A tool call's arguments as Anthropic's `input` object (arguments that are not a JSON object become {}). */
const toolInput = (args: string | undefined): Json => jsonObject(args);

export function chatToMessages(c: ChatCompletion, ids: MessageIds = randomMessageId): Json {
  const choice = c.choices?.[0];
  const message = choice?.message;
  const content: Json[] = [];
  const reasoning = stringOf(message?.reasoning_content);
  if (reasoning) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = contentText(message?.content);
  if (text) content.push({ type: 'text', text });
  const calls = message?.tool_calls ?? [];
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: toolInput(call.function?.arguments) });
  return {
    id: messageIdOf(c.id, ids),
    type: 'message',
    role: 'assistant',
    model: c.model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason, calls.length > 0),
    stop_sequence: null,
    usage: messagesUsageOf(c.usage),
  };
}

/**
 * An Anthropic usage holder (a message, or a message_delta event): input_tokens leave out the cached part
 * (read or written) that the billed prompt includes. `reported` is the usage the upstream gave (a stream's,
 * merged over its events).
 */
export function showMessagesUsage(holder: Json, u: ChatUsage, reported: Json = objectOf(holder.usage)): void {
  const old = reported;
  const cacheRead = u.prompt_tokens_details?.cached_tokens ?? 0;
  const written = typeof old.cache_creation_input_tokens === 'number' && Number.isSafeInteger(old.cache_creation_input_tokens) && old.cache_creation_input_tokens >= 0 ? old.cache_creation_input_tokens : 0;
  const creation = Math.min(written, Math.max(0, u.prompt_tokens - cacheRead));
  merge(holder, 'usage', {
    input_tokens: u.prompt_tokens - cacheRead - creation,
    output_tokens: u.completion_tokens,
    ...('cache_read_input_tokens' in old || cacheRead > 0 ? { cache_read_input_tokens: cacheRead } : {}),
    ...('cache_creation_input_tokens' in old ? { cache_creation_input_tokens: creation } : {}),
  });
}
