import type { RelayQuote } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import type { Batch } from '../../kit/db/group-commit.js';
import type { EdgeDB, EdgeModelTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { modelOf } from '../models/store.js';
import { endpointsOf, queueEvents } from '../outbox/store.js';
import { holdOnWallet } from '../wallets/store.js';
import { lockedTokenQuota } from '../customers/tokens/store.js';
import { queueRun, type NewRun } from './store.js';

/** The enabled public model of a request; model_not_found / model_disabled otherwise. */
export async function servableModel(db: Db, publicModelId: string, field: string): Promise<EdgeModelTable> {
  const model = await modelOf(db, publicModelId);
  if (!model) throw new AppError('model_not_found', { params: { model: publicModelId, field } });
  if (!model.enabled) throw new AppError('model_disabled', { params: { model: publicModelId, field } });
  return model;
}

/**
 * What a call holds: at least the model's reserve and the call's minimum (its prompt and one output token,
 * or its per-call price: insufficient_balance when the wallet cannot cover that), up to the estimate with the
 * caller's output cap when the wallet covers it, else what the wallet has (the relay then caps the output at
 * what the hold pays for). Concurrent reservations never overdraw (holdOnWallet).
 *
 * A call of an account user's token also holds the amount on the token: its row is locked before the hold (so
 * calls of one token take their holds one after the other, and a limited token never lends more than
 * remain_quota: token_quota_exhausted below the minimum), and the hold is at most what it has left.
 */
async function hold(trx: Db, ownerId: number, model: EdgeModelTable, quote: RelayQuote | null, tokenId: number) {
  const floor = Math.max(Number(model.reserve_amount), quote?.minimum ?? 0);
  let wanted = Math.max(floor, quote?.estimate ?? 0);
  const token = tokenId ? await lockedTokenQuota(trx, tokenId) : null;
  if (token && !token.unlimited) {
    if (token.remain < floor) throw new AppError('token_quota_exhausted', { params: { remaining: Math.max(0, token.remain), amount: floor } });
    wanted = Math.min(wanted, token.remain);
  }
  const held = await holdOnWallet(trx, ownerId, wanted, floor, token ? { id: tokenId, unlimited: token.unlimited } : undefined);
  if ('available' in held) throw new AppError('insufficient_balance', { params: { amount: floor, available: held.available } });
  return held;
}

/**
 * A piece of a ledger batch (runs/ledger.ts): reserves the call's hold in the owner's wallet (and on its token,
 * see hold(); without a quote, the model's reserve amount), and queues the run and its events run.created@2.0
 * and wallet.reserved@2.0 on the batch. Answers the amount reserved.
 */
export async function reserveRun(trx: Db, batch: Batch<EdgeDB>, model: EdgeModelTable, run: Omit<NewRun, 'reserved_amount' | 'public_model_id' | 'revision'>, quote: RelayQuote | null = null): Promise<number> {
  const { wallet, amount } = await hold(trx, run.owner_id, model, quote, Number(run.token_id ?? 0));
  queueRun(batch, { ...run, public_model_id: model.public_model_id, reserved_amount: amount, revision: 1 });
  const createdAt = new Date(run.created_at).toISOString();
  const base = { ownerId: run.owner_id, traceparent: run.traceparent };
  const endpoints = await endpointsOf(trx, run.owner_id);
  queueEvents(
    batch,
    [
      {
        ...base,
        type: 'run.created@2.0',
        aggregateId: run.run_id,
        aggregateRevision: 1,
        payload: { runId: run.run_id, requestId: run.request_id, publicModelId: model.public_model_id, apiVersion: run.api_version, kind: run.kind, status: run.status, reservedAmount: amount, createdAt },
      },
      {
        ...base,
        type: 'wallet.reserved@2.0',
        aggregateId: wallet.wallet_id,
        aggregateRevision: Number(wallet.revision),
        payload: { walletId: wallet.wallet_id, runId: run.run_id, amount, balance: Number(wallet.balance), reserved: Number(wallet.reserved), available: Number(wallet.balance) - Number(wallet.reserved) },
      },
    ],
    run.created_at,
    endpoints,
  );
  return amount;
}
