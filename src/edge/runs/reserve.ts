import { AppError } from '../../kit/http/errors.js';
import type { EdgeModelTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { modelOf } from '../models/store.js';
import { appendEvent, endpointsOf } from '../outbox/store.js';
import { reserve, walletOf } from '../wallets/store.js';
import { insertRun, type NewRun } from './store.js';

/** The enabled public model of a request; model_not_found / model_disabled otherwise. */
export async function servableModel(db: Db, publicModelId: string, field: string): Promise<EdgeModelTable> {
  const model = await modelOf(db, publicModelId);
  if (!model) throw new AppError('model_not_found', { params: { model: publicModelId, field } });
  if (!model.enabled) throw new AppError('model_disabled', { params: { model: publicModelId, field } });
  return model;
}

/**
 * Inside the caller's transaction: reserves the model's reserve amount in the owner's wallet (never
 * overdrawing: insufficient_balance), inserts the run and writes run.created@2.0 and wallet.reserved@2.0.
 * Answers the amount reserved.
 */
export async function reserveRun(trx: Db, model: EdgeModelTable, run: Omit<NewRun, 'reserved_amount' | 'public_model_id' | 'revision'>): Promise<number> {
  const amount = Number(model.reserve_amount);
  const wallet = await reserve(trx, run.owner_id, amount);
  if (!wallet) {
    const w = await walletOf(trx, run.owner_id);
    const available = w ? Number(w.balance) - Number(w.reserved) : 0;
    throw new AppError('insufficient_balance', { params: { amount, available } });
  }
  await insertRun(trx, { ...run, public_model_id: model.public_model_id, reserved_amount: amount, revision: 1 });
  const createdAt = new Date(run.created_at).toISOString();
  const base = { ownerId: run.owner_id, traceparent: run.traceparent };
  const endpoints = await endpointsOf(trx, run.owner_id);
  await appendEvent(
    trx,
    {
      ...base,
      type: 'run.created@2.0',
      aggregateId: run.run_id,
      aggregateRevision: 1,
      payload: { runId: run.run_id, requestId: run.request_id, publicModelId: model.public_model_id, apiVersion: run.api_version, kind: run.kind, status: run.status, reservedAmount: amount, createdAt },
    },
    run.created_at,
    endpoints,
  );
  await appendEvent(
    trx,
    {
      ...base,
      type: 'wallet.reserved@2.0',
      aggregateId: wallet.wallet_id,
      aggregateRevision: Number(wallet.revision),
      payload: { walletId: wallet.wallet_id, runId: run.run_id, amount, balance: Number(wallet.balance), reserved: Number(wallet.reserved), available: Number(wallet.balance) - Number(wallet.reserved) },
    },
    run.created_at,
    endpoints,
  );
  return amount;
}
