import type { RelayUsage } from '../../contract/relay.js';
import type { ChatUsage } from '../providers/pivot.js';

/** Twice the largest context window of any model (2 million tokens): a prompt beyond it was never read. */
export const MAX_PROMPT_TOKENS = 4_000_000;
/** Far beyond any model's output limit (the largest write about 128 thousand tokens). */
export const MAX_COMPLETION_TOKENS = 1_000_000;
/** Room above a caller's own output limit: thinking that some upstreams count apart from it. */
const OUTPUT_SLACK = 65_536;

/** The most tokens a call's usage may report before it is taken for a wrong number. */
export interface UsageBounds {
  prompt: number;
  completion: number;
}

/** Bounds for a call whose caller asked at most `maxOutput` tokens back (undefined: no limit given). */
export function usageBounds(maxOutput: unknown): UsageBounds {
  const cap = typeof maxOutput === 'number' && Number.isFinite(maxOutput) && maxOutput > 0 ? maxOutput : Infinity;
  return { prompt: MAX_PROMPT_TOKENS, completion: Math.min(MAX_COMPLETION_TOKENS, 2 * cap + OUTPUT_SLACK) };
}

/** The call's usage, and the upstream's values that were not believed (field → value as sent), if any. */
export interface UsageCheck {
  usage: RelayUsage;
  rejected: Record<string, unknown> | null;
}

const whole = (v: unknown, max: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;

/**
 * The upstream's usage, each count checked: a prompt or completion count that is not a whole number from 0
 * to its bound is replaced by the tokenizer's count (`count`), and the usage is then marked counted; a wrong
 * cached or reasoning count becomes 0 (the prompt is then billed at the full rate). No usage, or zero for
 * both, is counted whole, as the reference does. A stream cut short (`cut`) keeps the upstream's prompt
 * count, and its completion is at least what its text so far counts.
 */
export function checkedUsage(u: ChatUsage | null, bounds: UsageBounds, count: { prompt(): number; completion(): number }, opts: { cut?: boolean } = {}): UsageCheck {
  if (!u || (u.prompt_tokens === 0 && (opts.cut || u.completion_tokens === 0))) {
    const prompt = count.prompt();
    const completion = count.completion();
    return { usage: { prompt_tokens: prompt, completion_tokens: completion, cached_tokens: 0, reasoning_tokens: 0, total_tokens: prompt + completion, counted: true }, rejected: null };
  }
  // Written out rather than with a helper closure: this runs once or twice for every call.
  let rejected: Record<string, unknown> | null = null;
  let prompt = u.prompt_tokens;
  if (!whole(prompt, bounds.prompt)) {
    (rejected ??= {}).prompt_tokens = prompt;
    prompt = count.prompt();
  }
  let completion = u.completion_tokens;
  if (!whole(completion, bounds.completion)) {
    (rejected ??= {}).completion_tokens = completion;
    completion = count.completion();
  }
  let counted = rejected !== null;
  if (opts.cut && !counted) {
    // The upstream's output count of a stream cut short is the count at its last report (message_start says 1).
    const sent = count.completion();
    if (sent > completion) [completion, counted] = [sent, true];
  }
  let cached: unknown = u.prompt_tokens_details?.cached_tokens ?? 0;
  if (!whole(cached, prompt)) {
    (rejected ??= {}).cached_tokens = cached;
    cached = 0;
  }
  let reasoning: unknown = u.completion_tokens_details?.reasoning_tokens ?? 0;
  if (!whole(reasoning, completion)) {
    (rejected ??= {}).reasoning_tokens = reasoning;
    reasoning = 0;
  }
  return {
    usage: { prompt_tokens: prompt, completion_tokens: completion, cached_tokens: cached as number, reasoning_tokens: reasoning as number, total_tokens: prompt + completion, counted },
    rejected,
  };
}
