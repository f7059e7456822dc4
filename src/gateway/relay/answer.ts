import type { RelayUsage } from '../../contract/relay.js';
import type { Plan } from './plan.js';
import { billedUsage, showChatUsage, showUsage } from './shown-usage.js';
import type { UsageCheck } from './usage.js';
import { chatToMessages, nativeMessagesAnswer } from './wire/anthropic-caller.js';
import { chatToGenerateContent, nativeGenerateContentAnswer } from './wire/gemini-caller.js';
import { payloadError } from '../providers/openai/relay.js';
import { chatToResponse, responsesUsage } from './wire/responses.js';
import type { ChatCompletion, ChatUsage, Json } from '../providers/pivot.js';
import type { ProviderRelay } from '../providers/types.js';

/**
 * A non-streamed answer in the caller's format, with its usage; `text` and `json` are the upstream's answer.
 * An answer passed through goes out as the upstream wrote it, unless the relay replaced its usage: then it
 * shows the billed usage instead (see shown-usage.ts).
 */
export function wholeAnswer(plan: Plan, provider: ProviderRelay, upstreamModel: string, text: string, json: unknown): { body: string; usage: UsageCheck } {
  const { call } = plan;
  const native = plan.native(provider);
  /** The upstream's own answer, as it came or with the billed usage. */
  const passed = (usage: UsageCheck) => {
    const billed = billedUsage(usage);
    if (!billed) return text;
    showUsage(call.format, json as Json, billed);
    return JSON.stringify(json);
  };
  if (call.format === 'embeddings') {
    const result = provider.embeddingsResult!(json, upstreamModel);
    const reported = result.usage ? { prompt_tokens: result.usage.prompt_tokens, completion_tokens: 0, total_tokens: result.usage.prompt_tokens } : null;
    const usage = usageOf(reported, plan, '');
    if (native) return { body: passed(usage), usage };
    // OpenAI answers base64 (float32, little-endian) when asked, and its SDKs ask by default.
    if (call.body.encoding_format === 'base64') {
      for (const d of result.data) if (Array.isArray(d.embedding)) d.embedding = float32Base64(d.embedding);
    }
    const billed = billedUsage(usage);
    if (billed) showUsage('embeddings', result as unknown as Json, billed);
    return { body: JSON.stringify(result), usage };
  }
  if (call.format === 'responses' && native) {
    const reported = responsesUsage(json);
    // As on the chat path: the upstream's message and code (for the auto-disable rules), counted by the breaker.
    const error = payloadError(json);
    if (error) throw error;
    const usage = usageOf(reported, plan, responseText(json));
    return { body: passed(usage), usage };
  }
  if (call.format === 'anthropic' && native) {
    const answer = nativeMessagesAnswer(json);
    const usage = usageOf(answer.usage, plan, answer.text);
    return { body: passed(usage), usage };
  }
  if (call.format === 'gemini' && native) {
    const answer = nativeGenerateContentAnswer(json);
    const usage = usageOf(answer.usage, plan, answer.text);
    return { body: passed(usage), usage };
  }
  const completion = provider.chatResult(json, upstreamModel);
  const usage = usageOf(completion.usage ?? null, plan, completionText(completion));
  if (native) return { body: passed(usage), usage };
  const billed = billedUsage(usage);
  if (billed) showChatUsage(completion, billed);
  if (call.format === 'responses') return { body: JSON.stringify(chatToResponse(completion, call.body)), usage };
  if (call.format === 'anthropic') return { body: JSON.stringify(chatToMessages(completion)), usage };
  if (call.format === 'gemini') return { body: JSON.stringify(chatToGenerateContent(completion)), usage };
  return { body: JSON.stringify(completion), usage };
}

export function zeroUsage(): RelayUsage {
  return { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 0, counted: false };
}

/**
 * The upstream's usage where it can be right, else counted: the prompt from the request, the completion
 * from the text (see checkedUsage).
 */
export function usageOf(u: ChatUsage | null, plan: Plan, completionText: string): UsageCheck {
  return plan.checkUsage(u, () => completionText);
}

/** An embedding as OpenAI's base64 form: float32 little-endian bytes. */
function float32Base64(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

function completionText(c: ChatCompletion): string {
  return c.choices.map((ch) => `${typeof ch.message.content === 'string' ? ch.message.content : ''}${(ch.message.reasoning_content as string | undefined) ?? ''}${(ch.message.tool_calls ?? []).map((t) => t.function.name + t.function.arguments).join('')}`).join('');
}

function responseText(json: unknown): string {
  const output = (json as { output?: { content?: { text?: unknown }[]; arguments?: unknown }[] })?.output ?? [];
  return output.map((o) => (o.content ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('') + (typeof o.arguments === 'string' ? o.arguments : '')).join('');
}
