import type { Kysely } from 'kysely';
import type { GatewayDB, JobTable } from '../db.js';

type Db = Kysely<GatewayDB>;

export async function insertJob(db: Db, job: JobTable) {
  await db.insertInto('gateway_jobs').values(job).execute();
}

export async function getJob(db: Db, id: string): Promise<JobTable | undefined> {
  return db.selectFrom('gateway_jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function activeJob(db: Db, type: string): Promise<JobTable | undefined> {
  return db.selectFrom('gateway_jobs').selectAll().where('type', '=', type).where('active', '=', 1).executeTakeFirst();
}

/** Ends a running job whose lease ran out (its runner is gone); false when it was renewed or ended meanwhile. */
export async function abandonJob(db: Db, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('gateway_jobs')
    .set({ status: 'failed', active: null, error: 'abandoned: the instance running it stopped', updated_at: now, finished_at: now })
    .where('id', '=', id)
    .where('active', '=', 1)
    .where('lease_until', '<', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Progress and a renewed lease, written only while this runner still holds the job. */
export async function renewJob(db: Db, id: string, runner: string, progress: string, leaseUntil: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('gateway_jobs')
    .set({ progress, lease_until: leaseUntil, updated_at: now })
    .where('id', '=', id)
    .where('runner', '=', runner)
    .where('active', '=', 1)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function finishJob(db: Db, id: string, runner: string, end: Pick<JobTable, 'status' | 'progress' | 'result' | 'error'>, now: number) {
  await db
    .updateTable('gateway_jobs')
    .set({ ...end, active: null, updated_at: now, finished_at: now })
    .where('id', '=', id)
    .where('runner', '=', runner)
    .where('active', '=', 1)
    .execute();
}

/** Finished jobs older than `before` go (the table holds recent history only). */
export async function pruneJobs(db: Db, before: number) {
  await db.deleteFrom('gateway_jobs').where('active', 'is', null).where('finished_at', '<', before).execute();
}
