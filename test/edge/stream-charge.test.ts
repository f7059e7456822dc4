import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { eachDatabase, type Variant } from '../helpers/services.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { gateSlowModel, ownerIdOf, settlementsOf, SLOW_USAGE, until } from '../helpers/runs.js';

/** slow-model: model_ratio 1, no completion ratio (SLOW_USAGE's 40 prompt and 10 completion tokens). */
const SLOW_COST = SLOW_USAGE.prompt_tokens + SLOW_USAGE.completion_tokens;

/** This session's id: PostgreSQL's backend pid, MySQL's connection id. */
async function sessionOf(db: Stack['edge']['ctx']['db'], v: Variant): Promise<number> {
  const q = v.name === 'postgres' ? sql<{ id: number }>`select pg_backend_pid() as id` : sql<{ id: number }>`select connection_id() as id`;
  return Number((await q.execute(db)).rows[0]!.id);
}

/** Whether another session waits for a row lock `holder` holds (MySQL: is locking a row of edge_wallets). */
async function waitsFor(st: Stack, v: Variant, holder: number): Promise<boolean> {
  const q =
    v.name === 'postgres'
      ? sql<{ n: number }>`select count(*) as n from pg_stat_activity where ${holder} = any(pg_blocking_pids(pid))`
      : sql<{ n: number }>`select count(*) as n from information_schema.processlist where db = database() and id <> ${holder} and info like '%edge_wallets%for update'`;
  return Number((await q.execute(st.edge.ctx.db)).rows[0]!.n) > 0;
}

eachDatabase('edge: a synchronous stream ends only once its charge is durable', (v) => {
  for (const http of [false, true]) {
    const relay = http ? 'the relay over HTTP' : 'the relay in process';
    let st: Stack;
    let slow: ReturnType<typeof gateSlowModel>;
    let key: string;

    before(async () => {
      st = await startStack(v, { http });
      slow = gateSlowModel(st.up);
      assert.equal((await st.edge.cli('edge', 'model', 'set', 'slow', '--reserve', '200', '--gateway-model', 'slow-model')).error, null);
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'streamer', '--amount', '10000')).error, null);
      key = await st.edge.issueKey('streamer');
    });
    after(() => st.close());

    test(`[DONE] reaches the client only after the settlement committed (${relay}; on PostgreSQL and MySQL the settlement is held on the wallet's row lock meanwhile)`, async () => {
      const s = st.edge;
      const res = await fetch(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 200);
      const requestId = res.headers.get('x-request-id')!;
      const settlements = async () => {
        const run = await s.ctx.db.selectFrom('edge_runs').select('run_id').where('request_id', '=', requestId).executeTakeFirstOrThrow();
        return settlementsOf(s, run.run_id);
      };
      const reader = res.body!.getReader();
      const utf8 = new TextDecoder();
      let received = '';
      /** Reads until `text` arrived: what the run's settlement rows were at that moment. */
      const readUntil = async (text: string) => {
        while (!received.includes(text)) {
          const { value, done } = await reader.read();
          if (done) assert.fail(`the stream ended without ${text}: ${received}`);
          received += utf8.decode(value, { stream: true });
        }
        return settlements();
      };
      // The first chunk: the reservation committed (the run exists), nothing settled yet.
      assert.deepEqual(await readUntil('first'), []);

      let unlock!: () => void;
      let holder = 0;
      let holding: Promise<void> = Promise.resolve();
      if (v.name !== 'sqlite') {
        // The wallet's row locked by another session: the settlement (which locks it) waits for it.
        const ownerId = await ownerIdOf(s, 'streamer');
        const locked = new Promise<void>((r) => (unlock = r));
        let held!: () => void;
        const taken = new Promise<void>((r) => (held = r));
        holding = s.ctx.db.transaction().execute(async (trx) => {
          await trx.selectFrom('edge_wallets').select('owner_id').where('owner_id', '=', ownerId).forUpdate().execute();
          holder = await sessionOf(trx, v);
          held();
          await locked;
        });
        await taken;
      }
      slow.release();
      let doneEarly = false;
      if (v.name !== 'sqlite') {
        // The upstream finished and the settlement is waiting on the lock: the client has no [DONE] yet.
        await until('the settlement waits for the wallet row', () => waitsFor(st, v, holder));
        const pending = reader.read().then((r) => {
          if (!r.done) received += utf8.decode(r.value, { stream: true });
        });
        // A read that has something to give settles here; one waiting for [DONE] stays pending.
        await Promise.race([pending, new Promise((r) => setImmediate(r))]);
        doneEarly = received.includes('[DONE]');
        unlock();
        await holding;
        await pending;
      }
      assert.equal(doneEarly, false, 'the stream ended before its settlement committed');
      const settled = await readUntil('[DONE]');
      assert.deepEqual(
        settled.map((r) => [r.source, r.outcome, Number(r.charged)]),
        [['sync', 'succeeded', SLOW_COST]],
        'when the client reads [DONE], the call is charged',
      );
      assert.equal((await reader.read()).done, true);
    });
  }
});
