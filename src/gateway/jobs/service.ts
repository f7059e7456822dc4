import crypto from 'node:crypto';
import { isUniqueViolation } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds, type JobTable } from '../db.js';
import { abandonJob, activeJob, finishJob, getJob, insertJob, pruneJobs, renewJob } from './store.js';

/** What a job's body gets: a progress reporter and a signal that fires when the gateway shuts down. */
export interface JobRun {
  taskId: string;
  signal: AbortSignal;
  /** Records progress (written at most every PROGRESS_WRITE_MS, and at the end). */
  progress(p: Record<string, unknown>): void;
}

/** The job's answer to G33/G40 and to GS02. */
export function jobView(j: JobTable) {
  return {
    task_id: j.id,
    type: j.type,
    status: j.status,
    progress: JSON.parse(j.progress) as Record<string, unknown>,
    result: j.result === null ? null : (JSON.parse(j.result) as unknown),
    error: j.error,
    created_by: j.created_by_name,
    created_at: Number(j.created_at),
    updated_at: Number(j.updated_at),
    finished_at: j.finished_at === null ? null : Number(j.finished_at),
  };
}

const PROGRESS_WRITE_MS = 500;
const HISTORY_SECONDS = 7 * 86400;

/**
 * Background jobs with one active job per type across every instance on the database: the unique index on
 * (type, active) of migration 0012 admits one active row per type, the runner renews a lease while it works, and a
 * job whose lease ran out (its instance died) is marked abandoned when the next one starts.
 */
export class JobService {
  private readonly runner = `${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(private readonly ctx: GatewayContext) {}

  private get leaseSeconds() {
    return this.ctx.config.gateway.jobLeaseSeconds;
  }

  /**
   * Starts `body` as job `type` unless one is active: then 409 JOB_RUNNING with that job's
   * `{task_id, status, type}`. The job row and its audit row (under `operation`, the SPEC id that started
   * it) are written together. Answers at once; the body runs in the background.
   */
  async start(actor: Actor, operation: string, type: string, params: Record<string, unknown>, body: (run: JobRun) => Promise<unknown>) {
    const now = nowSeconds();
    const job: JobTable = {
      id: crypto.randomUUID(),
      type,
      status: 'running',
      active: 1,
      params: JSON.stringify(params),
      progress: '{}',
      result: null,
      error: null,
      created_by: actor.id,
      created_by_name: actor.name,
      runner: this.runner,
      lease_until: now + this.leaseSeconds,
      created_at: now,
      updated_at: now,
      finished_at: null,
    };
    await pruneJobs(this.ctx.db, now - HISTORY_SECONDS);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.ctx.db.transaction().execute(async (trx) => {
          await insertJob(trx, job);
          await audit(trx, actor, operation, null, { task_id: job.id, type, ...params });
        });
        break;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        const other = await activeJob(this.ctx.db, type);
        // The other job ended between the insert and the read, or its runner is gone: try once more.
        if (attempt === 0 && (!other || (await abandonJob(this.ctx.db, other.id, nowSeconds())))) continue;
        const running = other ?? (await activeJob(this.ctx.db, type));
        throw new AppError('JOB_RUNNING', { params: { type }, data: running ? { task_id: running.id, status: running.status, type } : { type } });
      }
    }
    this.launch(job, body);
    return { task_id: job.id, status: job.status, type };
  }

  async get(taskId: string) {
    const job = await getJob(this.ctx.db, taskId);
    if (!job) throw new AppError('JOB_NOT_FOUND');
    return jobView(job);
  }

  /** Stops this instance's jobs (gateway shutdown): each ends as failed, "stopped". */
  async close() {
    for (const r of this.running.values()) r.abort.abort();
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private launch(job: JobTable, body: (run: JobRun) => Promise<unknown>) {
    const abort = new AbortController();
    let progress: Record<string, unknown> = {};
    let lastWrite = 0;
    let writing: Promise<unknown> = Promise.resolve();
    const write = () => {
      lastWrite = Date.now();
      const text = JSON.stringify(progress);
      writing = writing.then(() => renewJob(this.ctx.db, job.id, this.runner, text, nowSeconds() + this.leaseSeconds, nowSeconds())).catch((e) => this.ctx.log.warn({ err: e, task_id: job.id }, 'job progress write failed'));
    };
    const heartbeat = setInterval(write, Math.max(1000, (this.leaseSeconds * 1000) / 3));
    heartbeat.unref();
    const run: JobRun = {
      taskId: job.id,
      signal: abort.signal,
      progress: (p) => {
        progress = p;
        if (Date.now() - lastWrite >= PROGRESS_WRITE_MS) write();
      },
    };
    const started = performance.now();
    this.ctx.metrics.jobStarted(job.type);
    const done = (async () => {
      let end: Pick<JobTable, 'status' | 'result' | 'error'>;
      try {
        const result = await body(run);
        end = abort.signal.aborted ? { status: 'failed', result: null, error: 'stopped: the gateway shut down' } : { status: 'succeeded', result: JSON.stringify(result ?? null), error: null };
      } catch (e) {
        // Job bodies fail with AppErrors (a code, no secret); anything else is logged here and reported by kind only.
        if (!(e instanceof AppError)) this.ctx.log.error({ err: e, task_id: job.id }, 'job failed');
        end = { status: 'failed', result: null, error: e instanceof AppError ? e.code : 'internal error' };
      } finally {
        clearInterval(heartbeat);
      }
      this.ctx.metrics.jobFinished(job.type, end.status === 'succeeded' ? 'succeeded' : 'failed', (performance.now() - started) / 1000);
      await writing;
      await finishJob(this.ctx.db, job.id, this.runner, { ...end, progress: JSON.stringify(progress) }, nowSeconds()).catch((e) => this.ctx.log.error({ err: e, task_id: job.id }, 'job end write failed'));
    })().finally(() => this.running.delete(job.id));
    this.running.set(job.id, { abort, done });
  }

  /** When the newest job of `type` was started (seconds), on any instance; null when none is recorded. */
  async lastStarted(type: string): Promise<number | null> {
    const row = await this.ctx.db.selectFrom('gateway_jobs').select('created_at').where('type', '=', type).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
    return row ? Number(row.created_at) : null;
  }
}
