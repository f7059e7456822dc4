import type { Batch } from '../../kit/db/group-commit.js';
import { insertRows } from '../../kit/db/insert-rows.js';
import { prepared } from '../../kit/db/prepared.js';
import type { Db } from '../keys/store.js';
import type { EdgeDB, EdgeRunTable, RunStatus } from '../db.js';

type Defaulted = 'lease_owner' | 'lease_until' | 'attempts' | 'cancel_requested' | 'output' | 'prompt_tokens' | 'completion_tokens' | 'cost' | 'error_code' | 'error_message' | 'started_at' | 'finished_at' | 'token_id' | 'token_name' | 'stream';
export type NewRun = Omit<EdgeRunTable, Defaulted> & Partial<Pick<EdgeRunTable, Defaulted>>;

const RUN_COLUMNS: readonly (keyof EdgeRunTable)[] = [
  'run_id', 'request_id', 'owner_id', 'key_id', 'public_model_id', 'input', 'api_version', 'reserved_amount', 'status', 'revision', 'traceparent',
  'created_at', 'kind', 'format', 'lease_owner', 'lease_until', 'attempts', 'cancel_requested', 'output', 'prompt_tokens', 'completion_tokens',
  'cost', 'error_code', 'error_message', 'started_at', 'finished_at', 'deadline_at', 'token_id', 'token_name', 'stream',
];
const RUN_DEFAULTS: Pick<EdgeRunTable, Defaulted> = {
  lease_owner: null, lease_until: null, attempts: 0, cancel_requested: 0, output: null, prompt_tokens: 0, completion_tokens: 0, cost: 0,
  error_code: null, error_message: null, started_at: null, finished_at: null, token_id: 0, token_name: '', stream: 0,
};
const insertRunRows = insertRows<EdgeDB>('edge_runs', RUN_COLUMNS);

/** A run's values in the order of RUN_COLUMNS, a missing one its default. */
function valuesOf(run: NewRun): unknown[] {
  const row = run as Partial<EdgeRunTable>;
  return RUN_COLUMNS.map((c) => row[c] ?? (RUN_DEFAULTS as Partial<EdgeRunTable>)[c] ?? null);
}

export async function insertRun(trx: Db, run: NewRun) {
  await insertRunRows(trx, [valuesOf(run)]);
}

/** insertRun inside a ledger batch: written with the batch's other runs by one INSERT before its commit. */
export function queueRun(batch: Batch<EdgeDB>, run: NewRun) {
  batch.add(insertRunRows, valuesOf(run));
}

// Every settlement reads its run (see prepared()): locked where the database locks rows.
const runRow = prepared((db: Db, runId: string) => db.selectFrom('edge_runs').selectAll().where('run_id', '=', runId));
const lockedRunRow = prepared((db: Db, runId: string) => db.selectFrom('edge_runs').selectAll().where('run_id', '=', runId).forUpdate());

export async function runOf(db: Db, runId: string, lock = false): Promise<EdgeRunTable | undefined> {
  return (await (lock ? lockedRunRow : runRow)(db, runId)).rows[0];
}

/** An owner's run by the request id the admission answered (the newest, should a client reuse one). */
export async function runByRequest(db: Db, ownerId: number, requestId: string) {
  return db.selectFrom('edge_runs').selectAll().where('owner_id', '=', ownerId).where('request_id', '=', requestId).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
}

/** Admitted runs a worker may take: never started, or started by a worker whose lease has run out. */
export async function claimableRuns(db: Db, now: number, limit: number) {
  return db
    .selectFrom('edge_runs')
    .select('run_id')
    .where('kind', '=', 'async')
    .where((eb) => eb.or([eb('status', '=', 'reserved'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
    .where('deadline_at', '>', now)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/**
 * Takes a run for `owner` until `until`, when it is still free (reserved, or its lease ran out): one
 * conditional update, so two workers never hold one run. Answers whether this worker got it.
 */
export async function claimRun(db: Db, runId: string, owner: string, now: number, until: number, deadline: number): Promise<boolean> {
  const r = await db
    .updateTable('edge_runs')
    .set((eb) => ({ status: 'running' as RunStatus, lease_owner: owner, lease_until: until, attempts: eb('attempts', '+', 1), started_at: now, deadline_at: deadline, revision: eb('revision', '+', 1) }))
    .where('run_id', '=', runId)
    .where((eb) => eb.or([eb('status', '=', 'reserved'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Extends a held lease; false when the run is no longer this worker's (taken over, cancelled, settled). */
export async function renewLease(db: Db, runId: string, owner: string, until: number): Promise<boolean> {
  const r = await db.updateTable('edge_runs').set({ lease_until: until }).where('run_id', '=', runId).where('lease_owner', '=', owner).where('status', '=', 'running').executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function requestCancel(db: Db, runId: string) {
  await db.updateTable('edge_runs').set({ cancel_requested: 1 }).where('run_id', '=', runId).execute();
}

export async function isCancelRequested(db: Db, runId: string): Promise<boolean> {
  const r = await db.selectFrom('edge_runs').select('cancel_requested').where('run_id', '=', runId).executeTakeFirst();
  return Number(r?.cancel_requested ?? 0) === 1;
}

/** Runs that have not ended by their deadline (any kind): the reconciliation's work. */
export async function overdueRuns(db: Db, now: number, limit: number) {
  return db.selectFrom('edge_runs').selectAll().where('status', 'in', ['reserved', 'running']).where('deadline_at', '<=', now).orderBy('deadline_at').limit(limit).execute();
}

/** An owner's ended runs since `from` (ms), for the usage read. */
export async function usageRows(db: Db, ownerId: number, from: number) {
  return db
    .selectFrom('edge_runs')
    .select(['public_model_id', 'finished_at', 'status', 'prompt_tokens', 'completion_tokens', 'cost'])
    .where('owner_id', '=', ownerId)
    .where('finished_at', '>=', from)
    .execute();
}
