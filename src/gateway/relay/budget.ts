import type { RelayCall, RelayQuote } from '../../contract/relay.js';
import { formatOf } from './formats/index.js';
import type { Plan } from './plan.js';
import { zeroUsage } from './answer.js';
import { costOf, type Price } from './pricing.js';

/** The output cap the caller set in its format's field; null when it set none (or the format has no output). */
export function callerMaxTokens(call: Pick<RelayCall, 'format' | 'body'>): number | null {
  return formatOf(call.format).output?.max(call.body) ?? null;
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
    const { quota } = costOf(price, zeroUsage(), false, plan.units());
    return { minimum: quota, estimate: quota };
  }
  const unit = unitCosts(price);
  const promptQuota = plan.countPrompt() * unit.prompt;
  if (!plan.format.output) {
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
  const output = plan.format.output;
  if (call.budget === undefined || price?.kind !== 'ratio' || !output) return call;
  const unit = unitCosts(price);
  if (!(unit.output > 0)) return call;
  const affordable = Math.max(1, Math.floor((call.budget - plan.countPrompt() * unit.prompt) / unit.output));
  const own = callerMaxTokens(call);
  const cap = Math.min(own ?? defaultMax, affordable);
  return cap === own ? call : { ...call, body: output.withMax(call.body, plan.model, cap) };
}
