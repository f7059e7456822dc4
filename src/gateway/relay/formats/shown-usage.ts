import type { UsageCheck } from '../usage.js';
import { objectOf } from '../../../kit/json/object.js';
import { chatUsage, type ChatUsage, type Json } from '../../providers/pivot.js';

/**
 * An answer passed through in the caller's format carries the upstream's usage. When the relay did not
 * believe those numbers (see checkedUsage), the caller is shown the ones it was billed for instead, in its
 * format's own fields; every other field of the usage object stays as the upstream wrote it.
 */

/** Usage of an upstream whose counts may be wrong, checked against the text so far (read only when needed). */
export type UsageShown = (u: ChatUsage | null, text: () => string) => ChatUsage | null;

/** A reader that shows the upstream's usage as it came. */
export const upstreamUsageShown: UsageShown = () => null;

/** The billed usage in chat terms when the check replaced any of the upstream's counts, else null. */
export function billedUsage(check: UsageCheck): ChatUsage | null {
  if (!check.rejected) return null;
  const u = check.usage;
  return chatUsage(u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.reasoning_tokens);
}

/** Writes `values` into `holder[key]`, keeping the upstream's other fields. */
export function merge(holder: Json, key: string, values: Json): void {
  holder[key] = { ...objectOf(holder[key]), ...values };
}

/** A detail count is written only where the upstream wrote one (its value may have been the wrong one). */
export function details(usage: Json, key: string, field: string, value: number): Json {
  const d = objectOf(usage[key]);
  return key in usage ? { [key]: { ...d, [field]: value } } : {};
}

/** OpenAI chat completions and chunks: `usage.prompt_tokens/completion_tokens/total_tokens` (and the details). */
export function showChatUsage(holder: Json, u: ChatUsage): void {
  const old = objectOf(holder.usage);
  merge(holder, 'usage', {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
    ...details(old, 'prompt_tokens_details', 'cached_tokens', u.prompt_tokens_details?.cached_tokens ?? 0),
    ...details(old, 'completion_tokens_details', 'reasoning_tokens', u.completion_tokens_details?.reasoning_tokens ?? 0),
  });
}

/** OpenAI embeddings: only prompt tokens. */
export function showEmbeddingsUsage(holder: Json, u: ChatUsage): void {
  merge(holder, 'usage', { prompt_tokens: u.prompt_tokens, total_tokens: u.prompt_tokens });
}
