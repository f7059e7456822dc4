import type { CountCall, RelayTokenCount } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import type { UpstreamClient } from '../../kit/upstream/client.js';
import { asFailure, sendJson, type Limits } from './attempt.js';
import { formatOf } from './formats/index.js';
import { legsOf, type LegSource } from './legs.js';
import { Plan } from './plan.js';

/** What counting needs of the relay's dependencies (the engine's RelayDeps has it all). */
export interface CountDeps extends LegSource {
  upstream: UpstreamClient;
  limits: Limits;
}

/**
 * Counts a prompt: the first channel the call would be routed to counts it when its provider has the
 * format's count endpoint (Anthropic's count_tokens, Gemini's countTokens); otherwise, or when that fails,
 * the relay's tokenizer does. No price is needed, nothing is charged or logged, no breaker is fed.
 */
export async function countTokens(d: CountDeps, asked: CountCall): Promise<RelayTokenCount> {
  const format = formatOf(asked.format);
  const counting = format.count;
  if (!counting) throw new AppError('relay_invalid_request', { params: { detail: `${asked.format} calls have no token count` } });
  const body = format.canonical ? format.canonical(asked.body) : asked.body;
  const plan = new Plan({ ...asked, body: counting.call(body) });
  const estimate = (): RelayTokenCount => ({ tokens: plan.countPrompt(), source: 'tokenizer' });
  const legs = legsOf(d, asked.caller.group, plan.model, null, false);
  const first = await legs.next();
  await legs.return();
  if (first.done) return estimate();
  const leg = first.value;
  if (leg.probe) await d.breaker.endProbe(leg.probe);
  const native = leg.provider.relay.countTokens?.[asked.format];
  if (!native) return estimate();
  const target = leg.channel.target(leg.keyIndex);
  try {
    const { json } = await sendJson(d.upstream, native(target, body, leg.upstreamModel, asked), target, d.limits, asked.signal);
    const tokens = counting.read(json);
    if (tokens !== null) return { tokens, source: 'upstream' };
    d.ctx.log.info({ channelId: leg.channel.row.id }, "relay: the upstream's token count holds no count; estimated with the tokenizer");
  } catch (e) {
    const failure = asFailure(e, target);
    d.ctx.log.info({ channelId: leg.channel.row.id, code: failure.code, status: failure.status }, 'relay: the upstream could not count the tokens; estimated with the tokenizer');
  }
  return estimate();
}
