import type { QuotedCall, RelayAnswer, RelayCall, RelayFormat, RelayPort, RelaySummary, RelayTokenCount } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import type { CancelSignal } from '../../kit/http/cancel-signal.js';
import type { InFlight } from '../../kit/ratelimit/inflight.js';
import type { EdgeContext } from '../context.js';
import type { EdgeIdentity } from '../keys/service.js';
import { checkModelAllowed } from '../keys/token-limits.js';
import { callerOf, costOf, failureOf, failureSummary, gatewayModelOf } from '../runs/execute.js';
import { reserveRun, servableModel } from '../runs/reserve.js';
import { settleRun } from '../runs/settle.js';
import { uuidV7 } from '../../kit/crypto/uuid7.js';

/** Failures of the edge's own link to the gateway (its token, its address): not the caller's to see. */
const LINK_FAILURES = new Set(['relay_token_missing', 'relay_token_invalid', 'relay_not_loopback', 'relay_not_configured']);
/** How long to wait for the gateway's log of a stream whose summary never arrived before asking for it. */
const SUMMARY_GRACE_MS = 2000;

export interface SyncCall {
  identity: EdgeIdentity;
  format: RelayFormat;
  /** The caller's body in its format; `model` the public model id (but for Gemini, see modelInPath). */
  body: Record<string, unknown>;
  /** Gemini callers name the public model and the stream in the path. */
  modelInPath?: { model: string; stream: boolean };
  /** A multipart call's files (body holds its text fields). */
  files?: RelayCall['files'];
  requestId: string;
  signal: CancelSignal;
  /** What channel-affinity rules may read (the user agent). */
  headers?: Record<string, string>;
  /** The caller's anthropic-version and anthropic-beta, for a channel of its format (RelayCall.vendorHeaders). */
  vendorHeaders?: Record<string, string>;
  /** An Anthropic caller's `?beta=true`, for a channel of its format (RelayCall.betaQuery). */
  betaQuery?: boolean;
}

/** A prompt to count (Anthropic's count_tokens, Gemini's countTokens): never reserved nor charged. */
export type CountCall = Pick<SyncCall, 'identity' | 'format' | 'body' | 'modelInPath' | 'requestId' | 'signal' | 'vendorHeaders' | 'betaQuery'>;

/** The public model a call names: in its body, or (Gemini) in its path. */
function publicModelOf(c: Pick<SyncCall, 'body' | 'modelInPath'>): string {
  const id = c.modelInPath ? c.modelInPath.model : c.body.model;
  if (typeof id !== 'string' || !id) throw new AppError('invalid_request_body', { params: { detail: 'model is required', field: 'model' } });
  return id;
}

/** The call as the relay is asked it: the public model replaced by its gateway model, where the call names it. */
function relayedAs(c: Pick<SyncCall, 'body' | 'modelInPath'>, gatewayModel: string): Pick<RelayCall, 'body' | 'modelInPath'> {
  if (c.modelInPath) return { body: c.body, modelInPath: { ...c.modelInPath, model: gatewayModel } };
  return { body: { ...c.body, model: gatewayModel } };
}

/**
 * A streamed answer whose end waits for its charge. The relay's summary settles before the stream's last
 * piece is handed out (in process: before its closing event; over HTTP: before the text ahead of the summary
 * comment, see relay/http-client.ts), so a piece pulled after it, and the end of the answer, go out only once
 * `charged` (the settlement) committed: a client never sees a stream's end, nor the closing event the relay
 * writes last (see answer.ts), before the charge is durable. Should the settlement fail, the answer is
 * cut there (the run is left to `edge reconcile`); a stream without its summary (the link broke) was cut already.
 */
async function* endsCharged<T>(pieces: AsyncIterable<T>, summary: Promise<unknown>, charged: Promise<unknown>): AsyncGenerator<T> {
  let summarized = false;
  summary.then(
    () => (summarized = true),
    () => {},
  );
  for await (const piece of pieces) {
    if (summarized) await charged;
    yield piece;
  }
  if (summarized) await charged;
}

/**
 * Model calls answered at once, in every caller format the relay speaks (OpenAI chat, Responses and
 * embeddings, Anthropic Messages, Gemini): each reserves the public model's amount (a 'sync' run), goes
 * through the gateway relay to the model's gateway name and group, and settles the run with the relay's
 * cost when the answer (or the stream) ends. The reservation and the settlement are pieces of ledger
 * batches (runs/ledger.ts): the call is relayed only after its reservation committed, and a whole answer is
 * sent, a stream ended, only after its settlement committed (endsCharged). A crash before that leaves the
 * run to `edge reconcile`.
 */
export class SyncCalls {
  constructor(
    private readonly ctx: EdgeContext,
    private readonly relay: RelayPort,
    private readonly inFlight: InFlight,
  ) {}

  /** The enabled public model a call may use: model_not_allowed (its token's limits), model_not_found, model_disabled. */
  private async modelFor(c: Pick<SyncCall, 'identity' | 'body' | 'modelInPath'>) {
    const publicModelId = publicModelOf(c);
    checkModelAllowed(c.identity.token, publicModelId, 'model');
    return servableModel(this.ctx.db, publicModelId, 'model');
  }

  /** Counts a prompt through the relay (the upstream's own count where the channel has one); nothing is held or charged. */
  async countTokens(c: CountCall): Promise<RelayTokenCount> {
    const model = await this.modelFor(c);
    const call = { format: c.format, ...relayedAs(c, gatewayModelOf(model)), caller: callerOf(c.identity.ownerId, model), requestId: c.requestId, signal: c.signal, vendorHeaders: c.vendorHeaders, betaQuery: c.betaQuery };
    return this.relay.countTokens(call).catch((e) => {
      throw this.callerError(e);
    });
  }

  async call(c: SyncCall): Promise<RelayAnswer> {
    const token = c.identity.token;
    const model = await this.modelFor(c);
    const ownerId = c.identity.ownerId;
    const asked: QuotedCall = { format: c.format, ...relayedAs(c, gatewayModelOf(model)), caller: callerOf(ownerId, model) };
    const quote = await this.relay.quote(asked).catch((e) => {
      throw this.callerError(e);
    });
    const limit = this.ctx.config.edge.runs.ownerConcurrency;
    if (!(await this.inFlight.acquire(`owner:${ownerId}`, limit))) throw new AppError('concurrency_limited', { params: { limit } });
    let released = false;
    const release = () => {
      if (!released) void this.inFlight.release(`owner:${ownerId}`).catch(() => {});
      released = true;
    };
    const runId = uuidV7();
    try {
      const now = Date.now();
      const amount = await this.ctx.ledger.write(ownerId, (trx, batch) =>
        reserveRun(trx, batch, model, {
          run_id: runId,
          request_id: c.requestId.slice(0, 64),
          owner_id: ownerId,
          key_id: c.identity.keyId,
          // The request itself is not kept: it is the caller's data and may be large.
          input: '',
          api_version: 'v1',
          status: 'running',
          traceparent: null,
          created_at: now,
          kind: 'sync',
          format: c.format,
          started_at: now,
          deadline_at: now + this.ctx.config.edge.runs.timeoutMs,
          token_id: token?.id ?? 0,
          token_name: token?.name ?? '',
          stream: (c.modelInPath ? c.modelInPath.stream : c.body.stream === true) ? 1 : 0,
        }, quote),
      );
      this.ctx.metrics.reservedRun('sync', amount);
      const answer = await this.relayed({ ...asked, ...(c.files ? { files: c.files } : {}), requestId: runId, signal: c.signal, headers: c.headers, vendorHeaders: c.vendorHeaders, betaQuery: c.betaQuery, budget: amount + Number(model.overdraft) }, ownerId);
      if (answer.kind === 'json') {
        await this.settle(runId, ownerId, answer.summary);
        release();
        return answer;
      }
      const settled = answer.summary.then(
        (s) => this.settle(runId, ownerId, s),
        () => this.settleLater(runId, ownerId, model.group_name),
      );
      void settled.catch((e) => this.ctx.log.error({ err: { message: (e as Error).message }, runId }, 'edge: call not settled, left to edge reconcile')).finally(release);
      if (answer.kind === 'stream') return { ...answer, pieces: endsCharged(answer.pieces, answer.summary, settled) };
      return { ...answer, chunks: endsCharged(answer.chunks, answer.summary, settled) };
    } catch (e) {
      release();
      // Only the reservation answers insufficient_balance.
      this.ctx.metrics.reservationRefused('sync', e);
      throw e;
    }
  }

  private async relayed(call: RelayCall, ownerId: number): Promise<RelayAnswer> {
    const runId = call.requestId;
    try {
      return await this.relay.relay(call);
    } catch (e) {
      const summary = failureSummary(e);
      const gone = call.signal?.aborted === true;
      await settleRun(this.ctx, runId, { status: gone ? 'cancelled' : 'failed', ...costOf(summary), error: failureOf(e), source: 'sync' }, ownerId).catch((err) => this.ctx.log.error({ err: { message: (err as Error).message }, runId }, 'edge: failed call not settled'));
      throw this.callerError(e);
    }
  }

  /** A relay failure as the caller sees it: the edge's own link to the gateway failing is service_unavailable. */
  private callerError(e: unknown): unknown {
    if (e instanceof AppError && LINK_FAILURES.has(e.code)) {
      this.ctx.log.error({ code: e.code }, 'edge: the gateway relay refused this edge (check EDGE_RELAY_TOKEN_KEY and EDGE_RELAY_URL)');
      return new AppError('service_unavailable');
    }
    if (!(e instanceof AppError)) {
      this.ctx.log.error({ err: { message: (e as Error)?.message } }, 'edge: the gateway relay could not be reached');
      return new AppError('service_unavailable');
    }
    return e;
  }

  private settle(runId: string, ownerId: number, s: RelaySummary) {
    const ok = s.error_code === null;
    const status = ok ? 'succeeded' : s.status === 499 ? 'cancelled' : 'failed';
    return settleRun(this.ctx, runId, { status, ...costOf(s), error: ok ? null : { code: s.error_code!, message: `the call ended with ${s.error_code}` }, source: 'sync' }, ownerId);
  }

  /** A stream whose summary did not arrive (the HTTP link broke): the gateway's log says what it cost. */
  private async settleLater(runId: string, ownerId: number, group: string) {
    await new Promise((r) => setTimeout(r, SUMMARY_GRACE_MS));
    const s = await this.relay.summaryOf(runId, callerOf(ownerId, { group_name: group }));
    if (s) await this.settle(runId, ownerId, s);
  }
}
