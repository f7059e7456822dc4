import type { RelayCall, RelayQuote } from '../../contract/relay.js';
import { reasoning } from '../providers/pivot.js';
import type { Plan } from './plan.js';
import { zeroUsage } from './answer.js';
import { costOf, type Price } from './pricing.js';

type Body = Record<string, unknown>;

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);

/** The output cap the caller set in its format's field; null when it set none (or the format has no output). */
export function callerMaxTokens(call: Pick<RelayCall, 'format' | 'body'>): number | null {
  const b = call.body;
  switch (call.format) {
    case 'chat': {
      const caps = [count(b.max_completion_tokens), count(b.max_tokens)].filter((n): n is number => n !== null);
      return caps.length ? Math.min(...caps) : null;
    }
    case 'responses':
      return count(b.max_output_tokens);
    case 'anthropic':
      return count(b.max_tokens);
    case 'gemini':
      return count((b.generationConfig as Body | undefined)?.maxOutputTokens);
    default:
      return null;
  }
}

/** The caller's body with its format's output cap set to `n` (every cap field it used, or the format's own). */
function withMaxTokens(call: Pick<RelayCall, 'format' | 'body'>, model: string, n: number): Body {
  const b = call.body;
  switch (call.format) {
    case 'chat': {
      const out: Body = { ...b };
      const fields = (['max_tokens', 'max_completion_tokens'] as const).filter((f) => b[f] !== undefined);
      if (!fields.length) fields.push(reasoning(model) ? 'max_completion_tokens' : 'max_tokens');
      for (const f of fields) out[f] = n;
      return out;
    }
    case 'responses':
      return { ...b, max_output_tokens: n };
    case 'anthropic':
      return { ...b, max_tokens: n };
    case 'gemini':
      return { ...b, generationConfig: { ...((b.generationConfig as Body | undefined) ?? {}), maxOutputTokens: n } };
    default:
      return b;
  }
}

/** A ratio price as quota per prompt token (the dearer of cached and uncached) and per output token. */
function unitCosts(price: Extract<Price, { kind: 'ratio' }>) {
  const unit = price.modelRatio * price.groupRatio;
  return { prompt: unit * Math.max(1, price.cacheRatio), output: unit * price.completionRatio };
}

/**
 * What a call can cost, in quota units, from its prompt as the tokenizer counts it: the minimum (the
 * prompt and one output token, or the per-call price) and the estimate with the caller's output cap (null
 * when the caller set none: the relay then caps the output at what the caller's budget pays for).
 */
export function quoteOf(plan: Plan, price: Price | null): RelayQuote {
  if (!price) return { minimum: 0, estimate: 0 };
  if (price.kind === 'fixed') {
    const { quota } = costOf(price, zeroUsage());
    return { minimum: quota, estimate: quota };
  }
  const unit = unitCosts(price);
  const promptQuota = plan.countPrompt() * unit.prompt;
  if (plan.call.format === 'embeddings') {
    const quota = Math.ceil(promptQuota);
    return { minimum: quota, estimate: quota };
  }
  const max = callerMaxTokens(plan.call);
  return { minimum: Math.ceil(promptQuota + unit.output), estimate: max === null ? null : Math.ceil(promptQuota + max * unit.output) };
}

/**
 * The call with its output capped so that its cost fits its budget: the caller's own smaller cap is kept,
 * a call without one gets the tokens the budget pays for, at most `defaultMax`. A per-call price, an
 * unpriced model, embeddings and a call without a budget are left as they are.
 */
export function withinBudget(plan: Plan, price: Price | null, defaultMax: number): RelayCall {
  const call = plan.call;
  if (call.budget === undefined || price?.kind !== 'ratio' || call.format === 'embeddings') return call;
  const unit = unitCosts(price);
  if (!(unit.output > 0)) return call;
  const affordable = Math.max(1, Math.floor((call.budget - plan.countPrompt() * unit.prompt) / unit.output));
  const own = callerMaxTokens(call);
  const cap = Math.min(own ?? defaultMax, affordable);
  return cap === own ? call : { ...call, body: withMaxTokens(call, plan.model, cap) };
}
