import type { RelayPort, RelayQuote } from '../../contract/relay.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { sha256 } from '../../kit/crypto/tokens.js';
import { canonicalJson } from '../../kit/json/canonical.js';
import type { EdgeContext } from '../context.js';
import { nowSeconds } from '../db.js';
import type { EdgeIdentity } from '../keys/service.js';
import { checkModelAllowed } from '../keys/token-limits.js';
import { modelOf } from '../models/store.js';
import { callerOf, runRequest } from '../runs/execute.js';
import { reserveRun, servableModel } from '../runs/reserve.js';
import { dropExpiredIdempotency, idempotencyOf, insertIdempotency } from './store.js';
import { uuidV7 } from '../../kit/crypto/uuid7.js';

export interface AdmissionRequest {
  /** The internal contract version; the /v1 routes fix it to 'v1'. */
  apiVersion: 'v1';
  identity: EdgeIdentity;
  requestId: string;
  idempotencyKey: string;
  traceparent: string | null;
  body: { publicModelId: string; input: string };
}

export interface Admission {
  requestId: string;
  runId: string;
  status: 'reserved';
  createdAt: string;
}

/**
 * Admission: one reservation per (owner, Idempotency-Key). In one piece of a ledger batch (runs/ledger.ts:
 * one transaction with concurrent reservations and settlements): the idempotency row (with the answer), the
 * model check, the wallet reservation, the run and its outbox events. Anything failing rolls the piece back,
 * so the key may be used again. A replay with the same body returns the stored answer; with another body,
 * 409 idempotency_key_conflict. Concurrent requests with one key: the second insert fails (the first is in its
 * batch) or waits for the first's commit (unique key), and then reads the first's answer once committed.
 */
export class AdmissionService {
  private lastCleanup = 0;

  constructor(
    private readonly ctx: EdgeContext,
    private readonly relay: RelayPort,
  ) {}

  /** Forgets expired idempotency keys, at most once a minute per process (not a statement per admission). */
  private async dropExpiredKeys() {
    const now = nowSeconds();
    if (now - this.lastCleanup < 60) return;
    this.lastCleanup = now;
    await dropExpiredIdempotency(this.ctx.db, now - this.ctx.config.edge.idempotencyTtlSeconds);
  }

  /**
   * The relay's quote for a run, asked before the transaction (it is a call to the relay). A model that cannot
   * be served gets none: the transaction refuses it after the idempotency key, so a replay is still answered.
   * A run waits for its relay: without a quote it is admitted on the model's reserve, and a refusal ends it
   * when it executes.
   */
  private async quoteOf(ownerId: number, body: AdmissionRequest['body']): Promise<RelayQuote | null> {
    const model = await modelOf(this.ctx.db, body.publicModelId);
    if (!model?.enabled) return null;
    return this.relay.quote({ ...runRequest(model, body.input), caller: callerOf(ownerId, model) }).catch((e) => {
      this.ctx.log.warn({ code: (e as { code?: string })?.code ?? 'relay_unreachable' }, 'edge: a run admitted without a quote');
      return null;
    });
  }

  async admit(r: AdmissionRequest, retried = false): Promise<{ admission: Admission; replayed: boolean }> {
    if (r.apiVersion !== 'v1') throw new Error(`admission: unsupported apiVersion ${String(r.apiVersion)}`);
    const ownerId = r.identity.ownerId;
    const token = r.identity.token;
    checkModelAllowed(token, r.body.publicModelId, 'publicModelId');
    const bodyHash = sha256(canonicalJson(r.body));
    await this.dropExpiredKeys();
    const now = Date.now();
    const admission: Admission = { requestId: r.requestId, runId: uuidV7(), status: 'reserved', createdAt: new Date(now).toISOString() };
    try {
      const quote = await this.quoteOf(ownerId, r.body);
      const amount = await this.ctx.ledger.write(ownerId, async (trx, batch) => {
        await insertIdempotency(trx, { owner_id: ownerId, key: r.idempotencyKey, body_hash: bodyHash, response: JSON.stringify(admission), created_at: Math.floor(now / 1000) });
        const model = await servableModel(trx, r.body.publicModelId, 'publicModelId');
        return reserveRun(trx, batch, model, {
          run_id: admission.runId,
          request_id: r.requestId,
          owner_id: ownerId,
          key_id: r.identity.keyId,
          input: r.body.input,
          api_version: r.apiVersion,
          status: 'reserved',
          traceparent: r.traceparent,
          created_at: now,
          kind: 'async',
          format: 'responses',
          // Not started by then: released (the worker's expiry sweep or `edge reconcile`).
          deadline_at: now + this.ctx.config.edge.runs.reservationTtlSeconds * 1000,
          token_id: token?.id ?? 0,
          token_name: token?.name ?? '',
        }, quote);
      });
      this.ctx.metrics.reservedRun('async', amount);
      return { admission, replayed: false };
    } catch (e) {
      if (!isUniqueViolation(e)) {
        this.ctx.metrics.reservationRefused('async', e);
        throw e;
      }
      const first = await idempotencyOf(this.ctx.db, ownerId, r.idempotencyKey);
      if (!first) throw e;
      // Expired but not yet swept (the sweep runs once a minute): the key is free again.
      if (!retried && Number(first.created_at) < nowSeconds() - this.ctx.config.edge.idempotencyTtlSeconds) {
        await dropExpiredIdempotency(this.ctx.db, nowSeconds() - this.ctx.config.edge.idempotencyTtlSeconds);
        return this.admit(r, true);
      }
      if (first.body_hash !== bodyHash) throw new AppError('idempotency_key_conflict');
      return { admission: JSON.parse(first.response) as Admission, replayed: true };
    }
  }
}
