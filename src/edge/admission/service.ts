import crypto from 'node:crypto';
import { isUniqueViolation } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { sha256 } from '../../kit/crypto/tokens.js';
import { canonicalJson } from '../../kit/json/canonical.js';
import type { EdgeContext } from '../context.js';
import { nowSeconds } from '../db.js';
import type { EdgeIdentity } from '../keys/service.js';
import { modelOf } from '../models/store.js';
import { appendEvent } from '../outbox/store.js';
import { reserve, walletOf } from '../wallets/store.js';
import { dropExpiredIdempotency, idempotencyOf, insertIdempotency, insertRun } from './store.js';

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
 * Admission: one reservation per (owner, Idempotency-Key). In one transaction: the idempotency row (with
 * the answer), the model check, the wallet reservation, the run and its outbox events. Anything failing
 * rolls everything back, so the key may be used again. A replay with the same body returns the stored
 * answer; with another body, 409 idempotency_key_conflict. Concurrent requests with one key: the second
 * insert waits for the first transaction (unique key) and then reads its answer.
 */
export class AdmissionService {
  constructor(private readonly ctx: EdgeContext) {}

  async admit(r: AdmissionRequest): Promise<{ admission: Admission; replayed: boolean }> {
    if (r.apiVersion !== 'v1') throw new Error(`admission: unsupported apiVersion ${String(r.apiVersion)}`);
    const ownerId = r.identity.ownerId;
    const bodyHash = sha256(canonicalJson(r.body));
    await dropExpiredIdempotency(this.ctx.db, nowSeconds() - this.ctx.config.edge.idempotencyTtlSeconds);
    const now = Date.now();
    const admission: Admission = { requestId: r.requestId, runId: crypto.randomUUID(), status: 'reserved', createdAt: new Date(now).toISOString() };
    try {
      await this.ctx.db.transaction().execute(async (trx) => {
        await insertIdempotency(trx, { owner_id: ownerId, key: r.idempotencyKey, body_hash: bodyHash, response: JSON.stringify(admission), created_at: Math.floor(now / 1000) });
        const model = await modelOf(trx, r.body.publicModelId);
        if (!model) throw new AppError('model_not_found', { params: { model: r.body.publicModelId, field: 'publicModelId' } });
        if (!model.enabled) throw new AppError('model_disabled', { params: { model: r.body.publicModelId, field: 'publicModelId' } });
        const amount = Number(model.reserve_amount);
        const wallet = await reserve(trx, ownerId, amount);
        if (!wallet) {
          const w = await walletOf(trx, ownerId);
          const available = w ? Number(w.balance) - Number(w.reserved) : 0;
          throw new AppError('insufficient_balance', { params: { amount, available } });
        }
        await insertRun(trx, {
          run_id: admission.runId,
          request_id: r.requestId,
          owner_id: ownerId,
          key_id: r.identity.keyId,
          public_model_id: r.body.publicModelId,
          input: r.body.input,
          api_version: r.apiVersion,
          reserved_amount: amount,
          status: 'reserved',
          revision: 1,
          traceparent: r.traceparent,
          created_at: now,
        });
        await appendEvent(
          trx,
          {
            type: 'run.created@2.0',
            aggregateId: admission.runId,
            aggregateRevision: 1,
            ownerId,
            traceparent: r.traceparent,
            payload: { runId: admission.runId, requestId: r.requestId, publicModelId: r.body.publicModelId, apiVersion: r.apiVersion, status: 'reserved', reservedAmount: amount, createdAt: admission.createdAt },
          },
          now,
        );
        await appendEvent(
          trx,
          {
            type: 'wallet.reserved@2.0',
            aggregateId: wallet.wallet_id,
            aggregateRevision: Number(wallet.revision),
            ownerId,
            traceparent: r.traceparent,
            payload: { walletId: wallet.wallet_id, runId: admission.runId, amount, balance: Number(wallet.balance), reserved: Number(wallet.reserved), available: Number(wallet.balance) - Number(wallet.reserved) },
          },
          now,
        );
      });
      return { admission, replayed: false };
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const first = await idempotencyOf(this.ctx.db, ownerId, r.idempotencyKey);
      if (!first) throw e;
      if (first.body_hash !== bodyHash) throw new AppError('idempotency_key_conflict');
      return { admission: JSON.parse(first.response) as Admission, replayed: true };
    }
  }
}
