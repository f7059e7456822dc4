import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { eachDatabase, postgresWithRedis, type Variant } from '../helpers/services.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { RELAY_SECRET } from '../helpers/relay.js';
import { admit, eventsOfRun, gateSlowModel, ownerIdOf, runRow, settlementsOf, until, walletOf } from '../helpers/runs.js';
import { reconcile } from '../../src/edge/runs/reconcile.js';
import { settleRun } from '../../src/edge/runs/settle.js';
import { reserveRun } from '../../src/edge/runs/reserve.js';
import { modelOf } from '../../src/edge/models/store.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';

const FINAL = ['succeeded', 'failed', 'cancelled'];

/** Statements making the database refuse to record a run's success (and undoing it): a trigger on edge_runs. */
function refuseSuccess(dialect: Variant['name']) {
  if (dialect === 'postgres') {
    return {
      create: [
        `create function t_refuse_success() returns trigger language plpgsql as $$ begin if new.status = 'succeeded' then raise exception 'success refused'; end if; return new; end $$`,
        'create trigger t_refuse_success before update on edge_runs for each row execute function t_refuse_success()',
      ],
      drop: 'drop function t_refuse_success() cascade',
    };
  }
  if (dialect === 'mysql') {
    return {
      create: [`create trigger t_refuse_success before update on edge_runs for each row begin if new.status = 'succeeded' then signal sqlstate '45000' set message_text = 'success refused'; end if; end`],
      drop: 'drop trigger t_refuse_success',
    };
  }
  return {
    create: [`create trigger t_refuse_success before update on edge_runs when new.status = 'succeeded' begin select raise(abort, 'success refused'); end`],
    drop: 'drop trigger t_refuse_success',
  };
}

eachDatabase('edge settlement: charged to the unit, capped by the available balance, exactly once', (v) => {
  let st: Stack;
  let s: EdgeServer;
  const START = 10_000;
  const work = async () => {
    await s.worker!.tick();
    await s.worker!.drain();
  };
  const overdraft = async (n: number) => assert.equal((await s.cli('edge', 'model', 'set', 'over', '--reserve', '100', '--gateway-model', 'gpt-4o', '--overdraft', String(n))).error, null);
  const charges: number[] = [];
  /** A started sync call of gpt-4o (its hold taken): its run id. */
  const startedRun = async (key: string, ownerId: number, requestId: string) => {
    const model = (await modelOf(s.ctx.db, 'gpt-4o'))!;
    const runId = crypto.randomUUID();
    const now = Date.now();
    await s.ctx.ledger.write(ownerId, (trx, batch) =>
      reserveRun(trx, batch, model, { run_id: runId, request_id: requestId, owner_id: ownerId, key_id: parseCredential(key)!.keyId, input: '', api_version: 'v1', status: 'running', traceparent: null, created_at: now, kind: 'sync', format: 'chat', started_at: now, deadline_at: now + 60_000 }),
    );
    return runId;
  };

  before(async () => {
    // The gateway's relay in process (the co-hosted deployment); test/edge/runs.test.ts goes over HTTP.
    st = await startStack(v);
    s = st.edge;
    assert.equal((await s.cli('edge', 'model', 'set', 'gpt-4o', '--reserve', '500')).error, null);
    await overdraft(0);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'cap', '--amount', String(START))).error, null);
  });
  after(() => st.close());

  test('a cost beyond the hold (the upstream answered past the cap it was sent) is charged whole from the available balance; the overdraft widens the cap; wallet = start − Σ charged', async () => {
    const key = await s.issueKey('cap');
    /** One admitted run of `over` (gpt-4o at the gateway: 320 units against a hold of 100), executed: the cap it went upstream with. */
    const run = async () => {
      const r = await admit(s, key, 'over');
      await work();
      const row = await runRow(s, r.runId);
      assert.deepEqual([row.status, Number(row.cost), Number(row.reserved_amount)], ['succeeded', CHAT_COST, 100]);
      const events = await eventsOfRun(s, r.runId);
      const settled = events.find((e) => e.type === 'wallet.settled@1')!.data;
      assert.deepEqual([settled.reserved, settled.charged, settled.released], [100, CHAT_COST, 0]);
      const billing = events.find((e) => e.type === 'billing.finalization-reconciliation-resolution.applied@1')!.data;
      assert.deepEqual([billing.cost, billing.charged, billing.resolution], [CHAT_COST, CHAT_COST, 'charged']);
      charges.push(CHAT_COST);
      return st.up.to('/v1/responses').at(-1)!.json.max_output_tokens as number;
    };
    const capped = await run();
    // The sync path (E04) settles the same way.
    const sync = await s.request('POST', '/v1/chat/completions', { token: key, body: { model: 'over', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(sync.status, 200);
    assert.equal(sync.json.usage.total_tokens, 120);
    const syncRow = await s.ctx.db.selectFrom('edge_runs').selectAll().where('request_id', '=', sync.headers.get('x-request-id')!).executeTakeFirstOrThrow();
    assert.deepEqual([syncRow.kind, syncRow.status, Number(syncRow.cost)], ['sync', 'succeeded', CHAT_COST]);
    charges.push(CHAT_COST);
    // 150 units more at 6 units per output token (model ratio 2 × completion ratio 3): 25 tokens more asked.
    await overdraft(150);
    assert.equal(await run(), capped + 25);
    await overdraft(0);
    const w = await walletOf(s, 'cap');
    assert.deepEqual([w.balance, w.reserved], [START - 3 * CHAT_COST, 0]);
    const rows = await s.ctx.db.selectFrom('edge_settlements').selectAll().where('owner_id', '=', await ownerIdOf(s, 'cap')).execute();
    assert.equal(rows.reduce((n, r) => n + Number(r.charged), 0), START - w.balance);
    assert.deepEqual(rows.map((r) => Number(r.charged)).sort((a, b) => a - b), [...charges].sort((a, b) => a - b));
  });

  test('the overdraft never takes more than the available balance, nor another run\'s reservation', async () => {
    await overdraft(1000);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'tight', '--amount', '250')).error, null);
    const key = await s.issueKey('tight');
    const runs = [await admit(s, key, 'over'), await admit(s, key, 'over')];
    const w0 = await walletOf(s, 'tight');
    assert.deepEqual([w0.balance, w0.reserved], [250, 200]);
    await work();
    // Each costs 320: the first settled may take its 100 and the 50 nobody holds, the second only its own 100.
    const costs = await Promise.all(runs.map(async (r) => Number((await runRow(s, r.runId)).cost)));
    assert.deepEqual(costs.sort((a, b) => a - b), [100, 150]);
    const w = await walletOf(s, 'tight');
    assert.deepEqual([w.balance, w.reserved], [0, 0]);
    const poor = await s.respond(key, { publicModelId: 'over', input: 'x' }, { 'idempotency-key': crypto.randomUUID() });
    assert.equal(poor.status, 402);
    assert.equal(poor.json.error.code, 'insufficient_balance');
  });

  test('settleRun on a settled run changes nothing (applied false) and writes no event; concurrent settlements apply once', async () => {
    const key = await s.issueKey('cap');
    const done = await admit(s, key, 'gpt-4o');
    await work();
    const snapshot = async (runId: string) => ({ wallet: await walletOf(s, 'cap'), run: await runRow(s, runId), settlements: await settlementsOf(s, runId), events: await eventsOfRun(s, runId), outbox: Number((await s.ctx.db.selectFrom('edge_outbox').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n) });
    const before = await snapshot(done.runId);
    assert.equal(before.run.status, 'succeeded');
    const ownerId = await ownerIdOf(s, 'cap');
    for (const source of ['worker', 'reconcile', 'cancel'] as const) {
      assert.deepEqual(await settleRun(s.ctx, done.runId, { status: 'failed', cost: 77, error: { code: 'x', message: 'again' }, source }, ownerId), { applied: false, status: 'succeeded', charged: CHAT_COST });
    }
    assert.deepEqual(await snapshot(done.runId), before);

    // A started sync call, settled by three at once (say the stream's end, a reconcile and a retry).
    const runId = await startedRun(key, ownerId, 'many-settlers');
    const w0 = await walletOf(s, 'cap');
    const outcomes = await Promise.all([11, 22, 33].map((cost) => settleRun(s.ctx, runId, { status: 'succeeded', cost, source: 'sync' }, ownerId)));
    const applied = outcomes.filter((o) => o.applied);
    assert.equal(applied.length, 1);
    const charged = applied[0]!.charged;
    assert.ok([11, 22, 33].includes(charged));
    for (const o of outcomes) assert.deepEqual([o.status, o.charged], ['succeeded', charged]);
    assert.deepEqual(await walletOf(s, 'cap'), { ...w0, balance: w0.balance - charged, reserved: w0.reserved - 500, revision: w0.revision + 1 });
    assert.deepEqual((await settlementsOf(s, runId)).map((r) => Number(r.charged)), [charged]);
    assert.deepEqual((await eventsOfRun(s, runId)).map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0', 'run.completed@1', 'wallet.settled@1', 'billing.finalization-reconciliation-resolution.applied@1']);
  });

  test('a run another transaction updates while its settlement waits for the lock (a worker renewing its lease) is still charged', { skip: v.name === 'sqlite' && 'one writer' }, async () => {
    const ownerId = await ownerIdOf(s, 'cap');
    const runId = await startedRun(await s.issueKey('cap'), ownerId, 'leased');
    const now = Date.now();
    const w0 = await walletOf(s, 'cap');
    let settling!: Promise<unknown>;
    await s.ctx.db.transaction().execute(async (trx) => {
      await trx.updateTable('edge_runs').set({ lease_until: now + 30_000 }).where('run_id', '=', runId).execute();
      settling = settleRun(s.ctx, runId, { status: 'succeeded', cost: 320, source: 'worker' }, ownerId);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    assert.deepEqual(await settling, { applied: true, status: 'succeeded', charged: 320 });
    assert.deepEqual(await walletOf(s, 'cap'), { ...w0, balance: w0.balance - 320, reserved: w0.reserved - 500, revision: w0.revision + 1 });
    const run = await runRow(s, runId);
    assert.deepEqual([run.status, Number(run.cost), run.lease_until], ['succeeded', 320, null], 'ended, charged, its lease cleared');
  });

  test("a served run whose settlement failed is left open, never settled as failed and free; the reconciliation charges it from the gateway's log", async () => {
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'served', '--amount', String(START))).error, null);
    const key = await s.issueKey('served');
    const ownerId = await ownerIdOf(s, 'served');
    const w0 = await walletOf(s, 'served');
    // The database refuses to record a success (a real failed ledger write), after the upstream has served the call.
    const refusal = refuseSuccess(v.name);
    for (const statement of refusal.create) await sql.raw(statement).execute(s.ctx.db);
    let runId: string;
    try {
      runId = (await admit(s, key, 'gpt-4o')).runId;
      await work();
    } finally {
      await sql.raw(refusal.drop).execute(s.ctx.db);
    }
    const logged = await st.gateway.relay.engine.summaryOf(runId, { issuer: 'edge', subject: `owner-${ownerId}` });
    assert.deepEqual([logged?.error_code, logged?.quota], [null, CHAT_COST], 'the upstream served the call');
    const open = await runRow(s, runId);
    assert.deepEqual([open.status, Number(open.cost), open.error_code], ['running', 0, null], 'not settled as failed and free');
    assert.deepEqual(await settlementsOf(s, runId), []);
    assert.deepEqual(await walletOf(s, 'served'), { ...w0, reserved: w0.reserved + 500, revision: w0.revision + 1 }, 'its hold kept');
    assert.match(s.log.text(), /run worker: run not settled/);

    const done = await reconcile(s.ctx, s.services.relay, { now: Number(open.deadline_at) + 1 });
    assert.deepEqual(done.find((r) => r.runId === runId), { runId, outcome: 'charged', charged: CHAT_COST });
    const run = await runRow(s, runId);
    assert.deepEqual([run.status, Number(run.cost)], ['succeeded', CHAT_COST]);
    assert.deepEqual((await settlementsOf(s, runId)).map((x) => x.source), ['reconcile']);
    assert.deepEqual(await walletOf(s, 'served'), { ...w0, balance: w0.balance - CHAT_COST, revision: w0.revision + 2 });
  });
});

const TWO = 'edge runs on two instances sharing PostgreSQL and Redis: every run executed and settled once, the in-flight limit shared';
const pgRedis = postgresWithRedis(TWO);
if (pgRedis) {
  describe(TWO, () => {
    let st: Stack;
    let a: EdgeServer;
    let b: EdgeServer;
    const START = 100_000;
    const OWNERS = ['o1', 'o2', 'o3', 'o4'];
    const env = { EDGE_OWNER_CONCURRENCY: '1', EDGE_RUN_CONCURRENCY: '8' };

    before(async () => {
      st = await startStack(pgRedis, { http: true, edgeEnv: env });
      a = st.edge;
      // The second instance: same database, same Redis key prefix (one deployment), its own worker and limiter.
      b = await startEdge(pgRedis, { shareWith: { dataDir: a.dataDir, databaseUrl: a.databaseUrl }, env: { ...env, REDIS_KEY_PREFIX: a.env.REDIS_KEY_PREFIX!, EDGE_RELAY_URL: st.gateway.url, EDGE_RELAY_TOKEN_KEY: RELAY_SECRET } });
      for (const id of ['gpt-4o', 'slow-model']) assert.equal((await a.cli('edge', 'model', 'set', id, '--reserve', '500')).error, null);
      for (const o of OWNERS) assert.equal((await a.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', String(START))).error, null);
    });
    after(async () => {
      await b?.close();
      await st?.close();
    });

    test('40 admitted runs, both workers ticking at once: each executed and settled exactly once', async () => {
      const keys: string[] = [];
      for (const o of OWNERS) keys.push(await a.issueKey(o)); // one at a time: the CLI's output is captured per call
      // Which instance's worker sent each run to the gateway (the worker calls its edge's relay port).
      const executed = new Map<EdgeServer, number>([[a, 0], [b, 0]]);
      for (const e of [a, b]) {
        const port = e.services.relay;
        const relay = port.relay.bind(port);
        port.relay = (call) => {
          if (call.format === 'responses') executed.set(e, executed.get(e)! + 1);
          return relay(call);
        };
      }
      const runs: string[] = [];
      for (let i = 0; i < 40; i++) runs.push((await admit(i % 2 ? b : a, keys[i % OWNERS.length]!, 'gpt-4o', `run ${i}`)).runId);
      const open = async () => (await a.ctx.db.selectFrom('edge_runs').select('status').where('run_id', 'in', runs).execute()).filter((r) => !FINAL.includes(r.status)).length;
      await until('every run ended', async () => {
        await Promise.all([a.worker!.tick(), b.worker!.tick()]);
        return (await open()) === 0;
      }, 30_000);
      await Promise.all([a.worker!.drain(), b.worker!.drain()]);
      const rows = await a.ctx.db.selectFrom('edge_runs').selectAll().where('run_id', 'in', runs).execute();
      assert.deepEqual(rows.map((r) => [r.status, Number(r.cost), Number(r.attempts), r.output]).sort(), runs.map((_, i) => ['succeeded', CHAT_COST, 1, `echo: run ${i}`]).sort());
      const settlements = await a.ctx.db.selectFrom('edge_settlements').selectAll().where('run_id', 'in', runs).execute();
      assert.equal(settlements.length, 40);
      assert.equal(new Set(settlements.map((x) => x.run_id)).size, 40);
      const events = await a.ctx.db.selectFrom('edge_outbox').select(['type', 'payload']).where('type', 'in', ['wallet.settled@1', 'run.started@1', 'run.completed@1']).execute();
      for (const type of ['wallet.settled@1', 'run.started@1', 'run.completed@1']) {
        const ids = events.filter((e) => e.type === type).map((e) => JSON.parse(e.payload).runId as string).filter((id) => runs.includes(id));
        assert.deepEqual(ids.sort(), [...runs].sort(), `one ${type} per run`);
      }
      assert.equal(st.up.to('/v1/responses').length, 40, 'a run was sent upstream twice');
      assert.equal(executed.get(a)! + executed.get(b)!, 40);
      assert.ok(executed.get(a)! > 0 && executed.get(b)! > 0, `both workers took runs (${[...executed.values()].join(' + ')})`);
      for (const o of OWNERS) {
        const w = await walletOf(a, o);
        assert.deepEqual([w.balance, w.reserved], [START - 10 * CHAT_COST, 0], `wallet of ${o}`);
      }
    });

    test('the per-owner in-flight limit is shared: a stream held on one instance refuses the owner on the other', async () => {
      const slow = gateSlowModel(st.up);
      const k1 = await a.issueKey('o1');
      const k2 = await b.issueKey('o2');
      const chat = (e: EdgeServer, token: string, model: string, stream = false) =>
        fetch(`${e.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream }) });
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      try {
        const held = await chat(a, k1, 'slow-model', true);
        assert.equal(held.status, 200);
        reader = held.body!.getReader();
        await reader.read();
        const k1b = await b.issueKey('o1');
        const refused = await chat(b, k1b, 'gpt-4o');
        assert.equal(refused.status, 429);
        assert.equal(((await refused.json()) as any).error.code, 'concurrency_limited');
        assert.equal((await chat(b, k2, 'gpt-4o')).status, 200, 'another owner is not limited');
        slow.release();
        while (!(await reader.read()).done);
        const run = (await a.ctx.db.selectFrom('edge_runs').select('run_id').where('request_id', '=', held.headers.get('x-request-id')!).executeTakeFirstOrThrow()).run_id;
        await until('the stream is settled', async () => FINAL.includes((await runRow(a, run)).status));
        assert.equal((await chat(b, k1b, 'gpt-4o')).status, 200, 'the slot taken on the first instance is free again on the second');
      } finally {
        slow.release();
        await reader?.cancel().catch(() => {});
      }
    });
  });
}
