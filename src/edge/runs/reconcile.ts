import type { RelayPort } from '../../contract/relay.js';
import type { EdgeContext } from '../context.js';
import { modelOf } from '../models/store.js';
import { callerOf, costOf } from './execute.js';
import { settleRun, type Settlement } from './settle.js';
import { overdueRuns } from './store.js';

export interface Reconciled {
  runId: string;
  outcome: 'released' | 'charged' | 'already settled';
  charged: number;
}

/**
 * Settles runs that have not ended by their deadline: one never started is released (its reservation
 * expired); one that started asks the gateway what its call cost (the relay log, by the run id) and is
 * charged that, or released when the gateway never served it. A run that ended meanwhile is left alone
 * (settlement happens once per run). Without a relay only never-started runs are settled.
 */
export async function reconcile(ctx: EdgeContext, relay: RelayPort | null, opts: { now?: number; limit?: number } = {}): Promise<Reconciled[]> {
  const done: Reconciled[] = [];
  for (const run of await overdueRuns(ctx.db, opts.now ?? Date.now(), opts.limit ?? 1000)) {
    let s: Settlement;
    if (run.status === 'reserved') {
      s = await settleRun(ctx, run.run_id, { status: 'failed', cost: 0, error: { code: 'reservation_expired', message: 'the run did not start before its reservation expired' }, source: run.kind === 'async' ? 'expiry' : 'reconcile' }, Number(run.owner_id));
    } else {
      if (!relay) continue;
      const model = await modelOf(ctx.db, run.public_model_id);
      const summary = await relay.summaryOf(run.run_id, callerOf(Number(run.owner_id), model ?? { group_name: 'default' }));
      const served = summary !== null && summary.error_code === null;
      s = await settleRun(ctx, run.run_id, {
        status: served ? 'succeeded' : 'failed',
        ...costOf(summary),
        error: served ? null : { code: 'run_interrupted', message: summary ? `the call ended with ${summary.error_code}` : 'the call did not reach the gateway before the edge stopped' },
        source: 'reconcile',
      }, Number(run.owner_id));
    }
    done.push({ runId: run.run_id, outcome: !s.applied ? 'already settled' : s.charged > 0 ? 'charged' : 'released', charged: s.charged });
  }
  return done;
}
