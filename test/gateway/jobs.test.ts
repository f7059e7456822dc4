import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

const actor = { id: 1, name: 'tester' };

/** A job body that reports progress and waits until released (or the gateway stops). */
function held() {
  let release!: (v: unknown) => void;
  const gate = new Promise((r) => (release = r));
  const body = async (run: { progress(p: Record<string, unknown>): void; signal: AbortSignal }) => {
    run.progress({ done: 1, total: 2 });
    await Promise.race([gate, new Promise((r) => run.signal.addEventListener('abort', r))]);
    run.progress({ done: 2, total: 2 });
    return { tested: 2 };
  };
  return { body, release: () => release(undefined) };
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

eachDatabase('gateway background jobs (GS02)', (v) => {
  let a: GatewayServer;
  let b: GatewayServer;
  let reader: StaffClient;
  before(async () => {
    a = await startGateway(v, { env: { GATEWAY_JOB_LEASE_SECONDS: '3' } });
    b = await startGateway(v, { env: { GATEWAY_JOB_LEASE_SECONDS: '3' }, shareWith: a });
    reader = await b.staff('reader', 'admin');
  });
  after(async () => {
    await b.close();
    await a.close();
  });

  test('one active job per type across two instances; progress and result readable from either', async () => {
    const job = held();
    const started = await a.services.jobs.start(actor, 'GS', 'channel_test', { mode: 'all' }, job.body);
    assert.equal(started.status, 'running');
    await assert.rejects(b.services.jobs.start(actor, 'GS', 'channel_test', {}, async () => null), (e: any) => e.code === 'JOB_RUNNING' && e.options.data.task_id === started.task_id);
    const other = await b.services.jobs.start(actor, 'GS', 'model_update', {}, async () => ({ n: 0 }));
    assert.notEqual(other.task_id, started.task_id);
    const mid = await until(() => reader.get(`/api/system_task/${started.task_id}`), (r) => r.json?.data?.progress?.done === 1);
    assert.equal(mid.status, 200, mid.text);
    assert.equal(mid.json.data.status, 'running');
    assert.equal(mid.json.data.type, 'channel_test');
    job.release();
    const end = await until(() => reader.get(`/api/system_task/${started.task_id}`), (r) => r.json?.data?.status !== 'running');
    assert.equal(end.json.data.status, 'succeeded');
    assert.deepEqual(end.json.data.result, { tested: 2 });
    assert.deepEqual(end.json.data.progress, { done: 2, total: 2 });
    const next = await b.services.jobs.start(actor, 'GS', 'channel_test', {}, async () => null);
    assert.notEqual(next.task_id, started.task_id, 'a finished job does not block the next');
  });

  test('a job whose runner stopped renewing its lease is abandoned and the next one starts', async () => {
    const job = held();
    const first = await a.services.jobs.start(actor, 'GS', 'lease_test', {}, job.body);
    // The runner's instance "dies": its lease runs out without renewal.
    await a.ctx.db.updateTable('gateway_jobs').set({ lease_until: 0, runner: 'gone' }).where('id', '=', first.task_id).execute();
    const second = await b.services.jobs.start(actor, 'GS', 'lease_test', {}, async () => 'ok');
    assert.notEqual(second.task_id, first.task_id);
    const old = await reader.get(`/api/system_task/${first.task_id}`);
    assert.equal(old.json.data.status, 'failed');
    assert.match(old.json.data.error, /abandoned/);
    job.release();
    await until(() => reader.get(`/api/system_task/${second.task_id}`), (r) => r.json?.data?.status === 'succeeded');
    // The old runner finishing late does not rewrite the abandoned job.
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await reader.get(`/api/system_task/${first.task_id}`)).json.data.status, 'failed');
  });

  test('a failing body ends as failed with its code only; a shutdown stops running jobs', async () => {
    const failing = await a.services.jobs.start(actor, 'GS', 'fail_test', {}, async () => {
      throw new Error('boom sk-secret-in-message');
    });
    const r = await until(() => reader.get(`/api/system_task/${failing.task_id}`), (x) => x.json?.data?.status !== 'running');
    assert.equal(r.json.data.status, 'failed');
    assert.equal(r.json.data.error, 'internal error');
    assert.ok(!r.text.includes('sk-secret'));
    const stop = await a.services.jobs.start(actor, 'GS', 'stop_test', {}, held().body);
    await a.services.jobs.close();
    const stopped = await reader.get(`/api/system_task/${stop.task_id}`);
    assert.equal(stopped.json.data.status, 'failed');
    assert.match(stopped.json.data.error, /stopped/);
  });

  test('GS02 bad input and unknown ids; permissions', async () => {
    assert.equal((await reader.get('/api/system_task/00000000-0000-0000-0000-000000000000')).json.code, 'JOB_NOT_FOUND');
    assert.equal((await reader.get('/api/system_task/not%20hex')).status, 400);
    assert.equal((await b.anonymous().get('/api/system_task/abc')).status, 401);
  });
});
