import { randomUUID } from 'node:crypto';
import { jsonObject, objectOf, stringOf } from '../../../../kit/json/object.js';
import { contentText, type ChatCompletion, type ChatUsage, type FinishReason, type Json } from '../../../providers/pivot.js';
import { merge } from '../shown-usage.js';

/** A chat completion as a GenerateContentResponse, and the usage of one; the stream encoder shares the pieces. */

/** Gemini says STOP for a turn that ended in function calls too. */
export function geminiFinishReason(finish: FinishReason | undefined): string {
  if (finish === 'length') return 'MAX_TOKENS';
  if (finish === 'content_filter') return 'SAFETY';
  return 'STOP';
}

/** Chat's completion tokens include the reasoning; Gemini counts thoughts apart from the candidates. */
export function usageMetadataOf(u: ChatUsage): Json {
  const thoughts = u.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  const out: Json = {
    promptTokenCount: u.prompt_tokens,
    candidatesTokenCount: Math.max(0, u.completion_tokens - thoughts),
    totalTokenCount: u.total_tokens || u.prompt_tokens + u.completion_tokens,
  };
  if (cached > 0) out.cachedContentTokenCount = cached;
  if (thoughts > 0) out.thoughtsTokenCount = thoughts;
  return out;
}

export function functionCallPart(call: { id?: string; name: string; arguments: string }): Json {
  const functionCall: Json = call.id ? { id: call.id } : {};
  functionCall.name = call.name;
  // Gemini's args must be an object: arguments that are not a JSON object become {}.
  functionCall.args = jsonObject(call.arguments);
  return { functionCall };
}

/** The id Gemini would give: the upstream's without its chat prefix. */
export const responseIdOf = (completionId: unknown): string =>
  typeof completionId === 'string' && completionId ? completionId.replace(/^chatcmpl-/, '') : randomUUID().replaceAll('-', '').slice(0, 24);

export function chatToGenerateContent(c: ChatCompletion): Json {
  const candidates = (c.choices ?? []).map((choice) => {
    const message = choice.message;
    const parts: Json[] = [];
    const reasoning = stringOf(message?.reasoning_content);
    if (reasoning) parts.push({ text: reasoning, thought: true });
    const text = contentText(message?.content);
    if (text) parts.push({ text });
    for (const call of message?.tool_calls ?? []) parts.push(functionCallPart({ id: call.id, name: call.function?.name ?? '', arguments: call.function?.arguments ?? '' }));
    return { content: { parts, role: 'model' }, finishReason: geminiFinishReason(choice.finish_reason), index: choice.index };
  });
  const out: Json = { candidates };
  if (c.usage) out.usageMetadata = usageMetadataOf(c.usage);
  out.modelVersion = c.model;
  out.responseId = responseIdOf(c.id);
  return out;
}

/** A Gemini GenerateContentResponse: `usageMetadata.promptTokenCount/candidatesTokenCount/totalTokenCount`. */
export function showGeminiUsage(response: Json, u: ChatUsage): void {
  const old = objectOf(response.usageMetadata);
  const shown = usageMetadataOf(u);
  for (const key of ['thoughtsTokenCount', 'cachedContentTokenCount']) if (key in old && !(key in shown)) shown[key] = 0;
  merge(response, 'usageMetadata', shown);
}
