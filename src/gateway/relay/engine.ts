import type { CountCall, QuotedCall, RelayAnswer, RelayAttempt, RelayCall, RelayPort, RelayPrices, RelayQuote, RelaySummary, RelayTokenCount, RelayUsage } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import type { CancelSignal } from '../../kit/http/cancel-signal.js';
import { checkJsonValueDepth } from '../../kit/json/limits.js';
import { jsonObject } from '../../kit/json/object.js';
import type { UpstreamClient } from '../../kit/upstream/client.js';
import type { AffinityService, RelayRequest } from '../affinity/service.js';
import type { GatewayContext } from '../context.js';
import { wholeAnswer, usageOf, zeroUsage } from './answer.js';
import { asFailure, AttemptFailure, openStream, sendJson, type Limits } from './attempt.js';
import type { Breaker } from './breaker.js';
import { bytesAnswer, type Finish } from './bytes-answer.js';
import { legsOf, type Leg } from './legs.js';
import { quoteOf, withinBudget } from './budget.js';
import { logRowOf } from './log-store.js';
import { callerName, summaryFromRow, type RelayLogWriter } from './log-writer.js';
import { countTokens } from './count.js';
import { Plan } from './plan.js';
import { readBlock } from './formats/stream-reader.js';
import { costOf, type Price, type Pricing } from './pricing.js';
import type { OpenChannel, Routing } from './routing.js';

export interface RelayDeps {
  ctx: GatewayContext;
  upstream: UpstreamClient;
  routing: Routing;
  breaker: Breaker;
  pricing: Pricing;
  affinity: AffinityService;
  log: RelayLogWriter;
  retries: number;
  limits: Limits;
  backoff: { baseMs: number; maxMs: number };
  allowUnpriced: boolean;
  /** The output tokens asked for a call with a budget whose caller set no cap (when the budget pays for more). */
  defaultMaxTokens: number;
  /** Whether a channel has spent its budget (and was disabled for it). */
  spent(c: OpenChannel): Promise<boolean>;
}

/**
 * The relay: picks channels for a call (priority, weight, affinity, multi-key mode), sends it in each
 * channel's wire format, fails over to the next channel on a retryable failure until output has begun, and
 * answers in the caller's format with the call's usage and cost. Every call ends in one relay log row.
 */
export class RelayEngine implements RelayPort {
  /** Told of calls refused before any channel was tried (no log row): the relay's metrics. */
  onRefused: ((code: 'relay_model_unpriced' | 'relay_no_channel', group: string) => void) | null = null;

  constructor(private readonly d: RelayDeps) {}

  async quote(call: QuotedCall): Promise<RelayQuote> {
    this.checkDepth(call.body);
    const plan = new Plan({ ...call, requestId: '' });
    return quoteOf(plan, await this.priceOf(plan));
  }

  prices(models: string[]): Promise<RelayPrices> {
    return this.d.pricing.table([...new Set(models)]);
  }

  /** Counts a prompt without calling the model (see count.ts). */
  countTokens(call: CountCall): Promise<RelayTokenCount> {
    this.checkDepth(call.body);
    return countTokens(this.d, call);
  }

  /** The HTTP listeners refuse too deep bodies at parse time; a caller in this process is held to the same limit. */
  private checkDepth(body: unknown) {
    const maxDepth = this.d.ctx.config.bodyMaxDepth;
    try {
      checkJsonValueDepth(body, maxDepth);
    } catch {
      throw new AppError('relay_request_too_deep', { params: { max: maxDepth } });
    }
  }

  /** The call's price; relay_model_unpriced when it has none and unpriced models are not served. */
  private async priceOf(plan: Plan): Promise<Price | null> {
    const group = plan.call.caller.group;
    const price = await this.d.pricing.price(plan.model, group);
    if (!price && !this.d.allowUnpriced) {
      this.onRefused?.('relay_model_unpriced', group);
      this.d.ctx.log.warn({ model: plan.model, group }, 'relay: a call for a model without a price was refused (set its model_ratio or model_price, or GATEWAY_RELAY_ALLOW_UNPRICED)');
      throw new AppError('relay_model_unpriced', { params: { model: plan.model } });
    }
    return price;
  }

  async relay(asked: RelayCall): Promise<RelayAnswer> {
    const startedAt = performance.now();
    this.checkDepth(asked.body);
    const planned = new Plan(asked);
    const price = await this.priceOf(planned);
    const call = withinBudget(planned, price, this.d.defaultMaxTokens);
    const plan = call === planned.call ? planned : new Plan(call);
    const affinityRequest: RelayRequest = { model: plan.model, group: call.caller.group, path: plan.path, userAgent: call.headers?.['user-agent'], headers: call.headers, body: call.body, context: { caller: call.caller.subject } };
    const sticky = await this.d.affinity.lookup(affinityRequest);
    const attempts: RelayAttempt[] = [];
    let last: { failure: AttemptFailure; leg: Leg | null } | null = null;
    const legs = legsOf(this.d, call.caller.group, plan.model, sticky?.channel_id ?? null, sticky?.skip_retry_on_failure === true);
    let failedWith: number | undefined;
    // Tries that reached (or tried to reach) an upstream: a channel that cannot serve the call spends no retry.
    let tries = 0;
    for (let next = await legs.next(); !next.done; next = await legs.next(failedWith)) {
      const leg = next.value;
      if (tries > this.d.retries) {
        if (leg.probe) await this.d.breaker.endProbe(leg.probe);
        break;
      }
      const target = leg.channel.target(leg.keyIndex);
      try {
        const answer = await this.attempt(plan, leg, price, attempts, startedAt);
        const served = answer.kind === 'json' ? Promise.resolve(answer.summary) : answer.summary;
        void served.then((s) => this.remember(affinityRequest, sticky?.channel_id ?? null, s, leg));
        return answer;
      } catch (e) {
        const failure = asFailure(e, target);
        attempts.push({ channel_id: leg.channel.row.id, key_index: leg.keyIndex, status: failure.status, error_code: failure.code, ms: Math.round(performance.now() - leg.startedAt) });
        last = { failure, leg };
        failedWith = failure.status || undefined;
        if (failure.kind !== 'unsupported') tries++;
        if (leg.probe) await this.d.breaker.endProbe(leg.probe);
        if (failure.kind === 'internal') {
          this.internalError(failure, leg);
          break;
        }
        if (call.signal?.aborted) break;
        if (failure.kind !== 'local') await this.afterFailure(leg, failure, affinityRequest, sticky?.channel_id ?? null);
        if (!failure.retryable) break;
        // Before the next leg is chosen: a pause or an opened breaker set during the wait is seen.
        if (failure.kind !== 'unsupported' && tries <= this.d.retries) await backoff(tries, this.d.backoff, call.signal);
      }
    }
    if (!last) {
      this.onRefused?.('relay_no_channel', call.caller.group);
      this.d.ctx.log.info({ model: plan.model, group: call.caller.group }, 'relay: no enabled, usable channel serves the model in the group');
      throw new AppError('relay_no_channel', { params: { model: plan.model, group: call.caller.group } });
    }
    const gone = call.signal?.aborted === true;
    const status = gone ? 499 : mappedStatus(last.leg, last.failure);
    const summary = this.summary(plan, last.leg, status, gone ? 'client_closed' : last.failure.code, zeroUsage(), price, null, attempts, startedAt);
    this.d.log.record(summary, { caller: call.caller, format: call.format, stream: plan.stream }, staffDetail(last.failure));
    throw new AppError(last.failure.code, { params: { status: last.failure.status, detail: last.failure.callerDetail }, data: { status, summary } });
  }

  private async attempt(plan: Plan, leg: Leg, price: Price | null, attempts: RelayAttempt[], startedAt: number): Promise<RelayAnswer> {
    const { call } = plan;
    const target = leg.channel.target(leg.keyIndex);
    const request = plan.request(leg.provider.relay, target, leg.upstreamModel, leg.channel.row.param_override);
    const served = (status: number) => attempts.push({ channel_id: leg.channel.row.id, key_index: leg.keyIndex, status, error_code: null, ms: Math.round(performance.now() - leg.startedAt) });

    if (plan.format.bytes) {
      const finish: Finish = (status, errorCode, usage, firstByteMs, detail = null) => {
        this.warnUsage(plan, leg, usage.rejected);
        const s = this.summary(plan, leg, status, errorCode, usage.usage, price, firstByteMs, attempts, startedAt);
        this.d.log.record(s, { caller: call.caller, format: call.format, stream: false }, detail);
        return s;
      };
      return bytesAnswer({ upstream: this.d.upstream, limits: this.d.limits, plan, request, target, startedAt, served: () => served(200), internalError: (f) => this.internalError(f, leg), finish });
    }

    if (!plan.stream) {
      const { text, json } = await sendJson(this.d.upstream, request, target, this.d.limits, call.signal);
      const { body, usage } = wholeAnswer(plan, leg.provider.relay, leg.upstreamModel, text, json);
      served(200);
      this.warnUsage(plan, leg, usage.rejected);
      const summary = this.summary(plan, leg, 200, null, usage.usage, price, Math.round(performance.now() - startedAt), attempts, startedAt, plan.units(json));
      this.d.log.record(summary, { caller: call.caller, format: call.format, stream: false });
      return { kind: 'json', status: 200, body, summary };
    }

    const reader = plan.reader(leg.provider.relay, leg.upstreamModel);
    const internalError = (f: AttemptFailure, l: Leg) => this.internalError(f, l);
    const open = await openStream(this.d.upstream, request, target, reader, this.d.limits, call.signal);
    served(200);
    const firstByteMs = Math.round(performance.now() - startedAt);
    let settle!: (s: RelaySummary) => void;
    const summary = new Promise<RelaySummary>((resolve) => (settle = resolve));
    const warnUsage = (p: Plan, l: Leg, rejected: Record<string, unknown> | null) => this.warnUsage(p, l, rejected);
    const finish = (status: number, errorCode: string | null, detail: string | null = null) => {
      // A stream cut short (the caller gone, the upstream broken) has the upstream's counts so far, not its final ones.
      // The text is read (every passed-through line parsed) only when the usage must be counted from it.
      const usage = status === 200 ? usageOf(reader.usage(), plan, () => reader.text()) : plan.checkCutUsage(reader.usage(), reader.text());
      warnUsage(plan, leg, usage.rejected);
      const s = this.summary(plan, leg, status, errorCode, usage.usage, price, firstByteMs, attempts, startedAt);
      this.d.log.record(s, { caller: call.caller, format: call.format, stream: true }, detail);
      settle(s);
    };
    async function* pieces(): AsyncGenerator<string> {
      let ended = false;
      try {
        if (open.held) yield open.held;
        for (;;) {
          const next = await open.blocks.next();
          if (next.done) break;
          const read = readBlock(reader, next.value);
          if (read.out) yield read.out; // what came before a bad line still goes out, then the error event
          if (read.error !== undefined) throw read.error;
        }
        ended = true;
        if (!reader.finished) {
          finish(502, 'relay_stream_interrupted', 'relay_stream_interrupted: the upstream stream ended before its last event');
          yield reader.fail('the upstream stream ended before its last event', 'relay_stream_interrupted');
        } else {
          // end() first: some decoders (Gemini) give the usage only when the stream ends.
          const tail = reader.end();
          finish(200, null);
          yield tail;
        }
      } catch (e) {
        if (ended) throw e;
        ended = true;
        if (call.signal?.aborted) {
          finish(499, 'client_closed');
          return;
        }
        const failure = asFailure(e, target);
        if (failure.kind === 'internal') {
          internalError(failure, leg);
          finish(500, failure.code, staffDetail(failure));
          yield reader.fail(failure.callerDetail, failure.code);
          return;
        }
        finish(502, 'relay_stream_interrupted', staffDetail(failure));
        yield reader.fail(failure.callerDetail, 'relay_stream_interrupted');
      } finally {
        open.stream.close();
        // The consumer stopped pulling (the caller went away): the call ends here.
        if (!ended) finish(499, 'client_closed');
      }
    }
    return { kind: 'stream', status: 200, contentType: 'text/event-stream; charset=utf-8', pieces: pieces(), summary };
  }

  async summaryOf(requestId: string, caller: Pick<RelayCall['caller'], 'issuer' | 'subject'>): Promise<RelaySummary | null> {
    await this.d.log.flush();
    const row = await logRowOf(this.d.ctx.db, requestId, callerName(caller));
    return row ? summaryFromRow(row) : null;
  }

  /**
   * After a call ended: a served one closes a probed breaker and keeps the affinity entry (when the rules keep
   * one) and its usage counters (G60); a stream that broke after output counts against its channel.
   */
  private async remember(r: RelayRequest, sticky: number | null, s: RelaySummary, leg: Leg) {
    try {
      const guard = leg.probe ?? { row: leg.channel.row, keyIndex: leg.keyIndex };
      if (s.error_code === 'relay_stream_interrupted') {
        await this.d.breaker.failed(guard, new AttemptFailure(s.error_code, 0, 'the stream broke off after output began', false, { kind: 'stream' }), leg.probe !== null);
      } else if (s.error_code === null) {
        await this.d.breaker.served(guard, leg.probe !== null);
      }
      if (leg.probe) await this.d.breaker.endProbe(leg.probe);
      if (s.error_code !== null || s.channel_id === null) return;
      if (sticky !== s.channel_id) await this.d.affinity.recordChosen(r, s.channel_id, sticky !== null);
      await this.d.affinity.recordUsage(r, { prompt_tokens: s.usage.prompt_tokens, completion_tokens: s.usage.completion_tokens, total_tokens: s.usage.total_tokens, cached_tokens: s.usage.cached_tokens });
    } catch (e) {
      this.d.ctx.log.warn({ err: { message: (e as Error).message } }, 'relay: breaker or affinity not updated after a call');
    }
  }

  /** Usage an upstream reported that cannot be right was replaced by the tokenizer's count: staff hear of it. */
  private warnUsage(plan: Plan, leg: Leg, rejected: Record<string, unknown> | null) {
    if (!rejected) return;
    const reported = Object.fromEntries(Object.entries(rejected).map(([k, v]) => [k, typeof v === 'string' ? v.slice(0, 64) : typeof v === 'object' && v !== null ? '(object)' : v]));
    this.d.ctx.log.warn({ channelId: leg.channel.row.id, channel: leg.channel.row.name, model: plan.model, requestId: plan.call.requestId, reported }, 'relay: the upstream reported usage that cannot be right; counted with the tokenizer instead');
  }

  /** An exception of the relay's own: logged for staff; it is no failure of the channel (no breaker, no failover). */
  private internalError(f: AttemptFailure, leg: Leg) {
    const e = f.internal as Error | undefined;
    this.d.ctx.log.error({ err: { name: e?.name, message: e?.message, stack: e?.stack?.split('\n').slice(0, 8).join('\n') }, channelId: leg.channel.row.id }, 'relay: internal error during a call');
  }

  /** A failed attempt feeds its channel's (or key's) breaker; the affinity entry naming that channel is dropped. */
  private async afterFailure(leg: Leg, f: AttemptFailure, r: RelayRequest, sticky: number | null) {
    try {
      await this.d.breaker.failed(leg.probe ?? { row: leg.channel.row, keyIndex: leg.keyIndex }, f, leg.probe !== null);
      if (sticky === leg.channel.row.id) await this.d.affinity.forget(r);
    } catch (e) {
      this.d.ctx.log.warn({ err: { message: (e as Error).message }, channelId: leg.channel.row.id }, 'relay: breaker not updated after a failure');
    }
  }

  private summary(plan: Plan, leg: Leg | null, status: number, errorCode: string | null, usage: RelayUsage, price: Price | null, firstByteMs: number | null, attempts: RelayAttempt[], startedAt: number, units = plan.units()): RelaySummary {
    const cost = errorCode && usage.total_tokens === 0 ? { quota: 0, usd: 0 } : costOf(price, usage, errorCode === null, units);
    return {
      request_id: plan.call.requestId,
      model: plan.model,
      upstream_model: leg?.upstreamModel ?? plan.model,
      channel_id: leg?.channel.row.id ?? null,
      key_index: leg?.keyIndex ?? null,
      status,
      error_code: errorCode,
      usage,
      quota: cost.quota,
      cost_usd: cost.usd,
      first_byte_ms: firstByteMs,
      total_ms: Math.round(performance.now() - startedAt),
      attempts,
    };
  }
}

/** Waits base · 2^(n-1), capped, times a random factor in [0.5, 1) before the n-th retry; the caller leaving ends the wait. */
function backoff(n: number, b: { baseMs: number; maxMs: number }, signal?: CancelSignal): Promise<void> {
  const ms = Math.min(b.maxMs, b.baseMs * 2 ** (n - 1)) * (0.5 + Math.random() / 2);
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A failure as staff read it in the relay log: the code, the upstream's status and its own words. */
function staffDetail(f: AttemptFailure): string {
  return `${f.code}${f.status ? ` (HTTP ${f.status})` : ''}: ${f.detail}`;
}

/** The channel's status_code_mapping applied to what the caller is told ({"404": "500"}). */
function mappedStatus(leg: Leg | null, f: AttemptFailure): number {
  if (f.kind === 'local') return 503;
  if (f.kind === 'internal') return 500;
  const upstream = f.status || (f.code === 'relay_upstream_timeout' ? 504 : f.code === 'relay_invalid_request' || f.kind === 'unsupported' ? 400 : 502);
  const status = upstream >= 400 ? upstream : 502;
  const mapped = leg ? jsonObject(leg.channel.row.status_code_mapping)[String(status)] : undefined;
  const n = Number(mapped);
  return Number.isInteger(n) && n >= 400 && n <= 599 ? n : status;
}
