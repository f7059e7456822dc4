import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import { FINAL_STATUSES, type EdgeRunTable } from '../db.js';
import { settleRun } from './settle.js';
import { requestCancel, runByRequest } from './store.js';
import { RunView, edgeErrors } from '../schemas.js';

const params = Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }) });
const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/** What an owner sees of a run. */
export function runView(r: EdgeRunTable) {
  return {
    requestId: r.request_id,
    runId: r.run_id,
    status: r.status,
    publicModelId: r.public_model_id,
    output: r.output,
    usage: { promptTokens: Number(r.prompt_tokens), completionTokens: Number(r.completion_tokens) },
    reservedAmount: Number(r.reserved_amount),
    cost: Number(r.cost),
    error: r.error_code ? { code: r.error_code, message: r.error_message } : null,
    createdAt: iso(r.created_at),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
  };
}

/** E02 and E03: an owner reads and cancels the runs its keys admitted (another owner's run is not found). */
export function runRoutes(ctx: EdgeContext) {
  const find = async (ownerId: number, requestId: string) => {
    const run = await runByRequest(ctx.db, ownerId, requestId);
    if (!run || run.kind !== 'async') throw new AppError('run_not_found', { params: { id: requestId, field: 'requestId' } });
    return run;
  };
  return [
    implement('E02', {
      answers: { 200: { description: 'The run', schema: RunView } },
      errors: edgeErrors.runs,
      schema: { params },
      noStore: true,
      handler: async (req) => runView(await find(identityOf(req).ownerId, req.params.requestId)),
    }),
    implement('E03', {
      answers: { 200: { description: 'The run, cancelled or being cancelled', schema: RunView } },
      errors: edgeErrors.runs,
      schema: { params },
      noStore: true,
      handler: async (req) => {
        const run = await find(identityOf(req).ownerId, req.params.requestId);
        if (FINAL_STATUSES.includes(run.status)) throw new AppError('run_not_cancellable', { params: { id: req.params.requestId, status: run.status } });
        // A run not started is settled here; a running one is stopped by its worker, which settles it.
        if (run.status === 'reserved') await settleRun(ctx, run.run_id, { status: 'cancelled', cost: 0, source: 'cancel' }, Number(run.owner_id));
        else await requestCancel(ctx.db, run.run_id);
        return runView((await runByRequest(ctx.db, run.owner_id, run.request_id))!);
      },
    }),
  ];
}
