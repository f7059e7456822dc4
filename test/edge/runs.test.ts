import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { RELAY_SECRET } from '../helpers/relay.js';
import { admit, eventsOfRun, gateSlowModel, ownerIdOf, runRow, settlementsOf, until, walletOf, within } from '../helpers/runs.js';
import { Dispatcher } from '../../src/edge/webhooks/dispatcher.js';
import { reconcile } from '../../src/edge/runs/reconcile.js';
import { reserveRun } from '../../src/edge/runs/reserve.js';
import { callerOf } from '../../src/edge/runs/execute.js';
import { modelOf } from '../../src/edge/models/store.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';

const START = 100_000;
const BILLING = 'billing.finalization-reconciliation-resolution.applied@1';

/** A webhook receiver on loopback answering 204 and keeping what it got. */
async function receiver() {
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, received, close: () => new Promise((r) => server.close(r)) };
}

/** Standard Webhooks verification, independent of the product's signer. */
function verifies(secret: string, r: { headers: http.IncomingHttpHeaders; body: string }) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature']).split(' ').includes(`v1,${mac}`);
}

eachDatabase('edge runs: admitted runs executed, read, cancelled, expired and reconciled through the gateway relay', (v) => {
  let st: Stack;
  let s: EdgeServer;
  let acme: string;
  let other: string;
  let slow: ReturnType<typeof gateSlowModel>;
  const view = (requestId: string, token = acme) => s.request('GET', `/v1/responses/${requestId}`, { token });
  const cancel = (requestId: string, token = acme) => s.request('POST', `/v1/responses/${requestId}/cancel`, { token });
  const work = async () => {
    await s.worker!.tick();
    await s.worker!.drain();
  };

  before(async () => {
    // The edge reaches the gateway over its internal API (as a separate process would); a short lease
    // makes the worker's heartbeat (a third of it) see a cancel within 200 ms.
    st = await startStack(v, { http: true, edgeEnv: { EDGE_RUN_LEASE_MS: '600' } });
    s = st.edge;
    slow = gateSlowModel(st.up);
    for (const [id, reserve] of [['gpt-4o', 500], ['broken-model', 100], ['slow-model', 100]] as const) assert.equal((await s.cli('edge', 'model', 'set', id, '--reserve', String(reserve))).error, null);
    for (const o of ['acme', 'other', 'meter']) assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', String(START))).error, null);
    acme = await s.issueKey('acme');
    other = await s.issueKey('other');
  });
  after(async () => {
    slow.release();
    await st.close();
  });

  test('an admitted run is executed by the worker; E02 shows it to its owner only; its events reach the owner\'s webhook signed', async () => {
    const rx = await receiver();
    try {
      const added = await s.cli('edge', 'webhook', 'add', '--owner', 'acme', '--url', rx.url);
      assert.equal(added.error, null);
      const secret = added.lines.at(-1)!;
      const w0 = await walletOf(s, 'acme');
      const run = await admit(s, acme, 'gpt-4o', 'hello');
      assert.equal((await view(run.requestId)).json.status, 'reserved');
      assert.deepEqual(await walletOf(s, 'acme'), { ...w0, reserved: 500, revision: w0.revision + 1 });
      await work();
      const r = await view(run.requestId);
      assert.equal(r.status, 200);
      assert.deepEqual({ ...r.json, createdAt: null, startedAt: null, finishedAt: null }, {
        requestId: run.requestId, runId: run.runId, status: 'succeeded', publicModelId: 'gpt-4o', output: 'echo: hello',
        usage: { promptTokens: 100, completionTokens: 20 }, reservedAmount: 500, cost: CHAT_COST, error: null, createdAt: null, startedAt: null, finishedAt: null,
      });
      assert.ok(Date.parse(r.json.createdAt) <= Date.parse(r.json.startedAt) && Date.parse(r.json.startedAt) <= Date.parse(r.json.finishedAt));
      assert.equal(st.up.to('/v1/responses').at(-1)!.json.input, 'hello');
      const nf = await view(run.requestId, other);
      assert.equal(nf.status, 404);
      assert.equal(nf.json.error.code, 'run_not_found');
      assert.deepEqual(await walletOf(s, 'acme'), { ...w0, balance: START - CHAT_COST, reserved: 0, revision: w0.revision + 2 });

      const events = await eventsOfRun(s, run.runId);
      assert.deepEqual(events.map((e) => [e.type, e.aggregate_id, e.aggregate_revision]), [
        ['run.created@2.0', run.runId, 1],
        ['wallet.reserved@2.0', w0.walletId, w0.revision + 1],
        ['run.started@1', run.runId, 2],
        ['run.completed@1', run.runId, 3],
        ['wallet.settled@1', w0.walletId, w0.revision + 2],
        [BILLING, `billing:${run.runId}`, 1],
      ]);
      assert.deepEqual(events[3]!.data, { runId: run.runId, requestId: run.requestId, status: 'succeeded', cost: CHAT_COST, promptTokens: 100, completionTokens: 20 });
      assert.deepEqual(events[4]!.data, { walletId: w0.walletId, runId: run.runId, reserved: 500, charged: CHAT_COST, released: 500 - CHAT_COST, balance: START - CHAT_COST, reserved_total: 0, available: START - CHAT_COST });
      assert.deepEqual(events[5]!.data, { runId: run.runId, resolution: 'charged', source: 'worker', reserved: 500, charged: CHAT_COST, cost: CHAT_COST });

      assert.equal(await new Dispatcher(s.ctx).drain(), 6);
      assert.equal(rx.received.length, 6);
      for (const got of rx.received) assert.ok(verifies(secret, got), 'a delivery whose signature does not verify');
      const bodies = rx.received.map((x) => JSON.parse(x.body)).sort((a, b) => a.sequence - b.sequence);
      assert.deepEqual(bodies.map((b) => [b.id, b.type, b.aggregateId, b.aggregateRevision, b.data]), events.map((e) => [e.event_id, e.type, e.aggregate_id, e.aggregate_revision, e.data]));
      assert.deepEqual(rx.received.map((x) => x.headers['webhook-id']).sort(), events.map((e) => e.event_id).sort());
    } finally {
      await rx.close();
    }
  });

  test('a run whose model fails upstream ends failed, charged 0, its reservation released (run.failed@1)', async () => {
    const w0 = await walletOf(s, 'acme');
    const run = await admit(s, acme, 'broken-model');
    await work();
    const r = (await view(run.requestId)).json;
    assert.equal(r.status, 'failed');
    assert.equal(r.cost, 0);
    assert.equal(r.output, null);
    assert.equal(r.error.code, 'relay_upstream_error');
    assert.deepEqual(await walletOf(s, 'acme'), { ...w0, revision: w0.revision + 2 });
    const events = await eventsOfRun(s, run.runId);
    assert.deepEqual(events.map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0', 'run.started@1', 'run.failed@1', 'wallet.settled@1', BILLING]);
    assert.equal(events[3]!.data.error.code, 'relay_upstream_error');
    assert.deepEqual([events[4]!.data.charged, events[4]!.data.released, events[5]!.data.resolution], [0, 100, 'released']);
  });

  test('cancel (E03): a reserved run is released at once; a running one is stopped by the worker\'s heartbeat; an ended one is 409', async () => {
    const w0 = await walletOf(s, 'acme');
    const reserved = await admit(s, acme, 'gpt-4o');
    assert.equal((await cancel(reserved.requestId, other)).status, 404);
    const c = await cancel(reserved.requestId);
    assert.equal(c.status, 200);
    assert.equal(c.json.status, 'cancelled');
    assert.deepEqual((await settlementsOf(s, reserved.runId)).map((x) => [x.outcome, x.source, Number(x.reserved), Number(x.charged)]), [['cancelled', 'cancel', 500, 0]]);
    assert.deepEqual((await eventsOfRun(s, reserved.runId)).map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0', 'run.cancelled@1', 'wallet.settled@1', BILLING]);
    assert.deepEqual(await walletOf(s, 'acme'), { ...w0, revision: w0.revision + 2 });

    const seen = st.up.to('/v1/responses').length;
    const running = await admit(s, acme, 'slow-model');
    await s.worker!.tick();
    await until('the upstream holds the run\'s call', () => st.up.to('/v1/responses').length === seen + 1);
    assert.equal((await view(running.requestId)).json.status, 'running');
    const asked = await cancel(running.requestId);
    assert.equal(asked.status, 200);
    assert.equal(asked.json.status, 'running', 'a running run ends when its worker stops it');
    await within(s.worker!.drain(), 5000, 'the worker stops the cancelled run');
    const r = (await view(running.requestId)).json;
    assert.deepEqual([r.status, r.cost, r.output, r.error], ['cancelled', 0, null, null]);
    await until('the upstream call is closed', () => slow.state.closed === 1);
    assert.deepEqual((await eventsOfRun(s, running.runId)).map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0', 'run.started@1', 'run.cancelled@1', 'wallet.settled@1', BILLING]);
    assert.deepEqual((await settlementsOf(s, running.runId)).map((x) => [x.outcome, x.source, Number(x.charged)]), [['cancelled', 'cancel', 0]]);
    assert.deepEqual(await walletOf(s, 'acme'), { ...w0, revision: w0.revision + 4 });

    for (const ended of [reserved, running]) {
      const again = await cancel(ended.requestId);
      assert.equal(again.status, 409);
      assert.equal(again.json.error.code, 'run_not_cancellable');
    }
  });

  test('reconciliation: an expired reservation is released; a crashed sync call is charged what the gateway logged, one it never saw is released', async () => {
    const ownerId = await ownerIdOf(s, 'acme');
    const model = (await modelOf(s.ctx.db, 'gpt-4o'))!;
    const keyId = parseCredential(acme)!.keyId;
    /** A sync call's run as the E04 path inserts it before relaying (status running), never settled: the edge "crashed". */
    const crashed = async (deadline: number, relayed: boolean) => {
      const runId = crypto.randomUUID();
      const now = Date.now();
      await s.ctx.ledger.write(ownerId, (trx, batch) =>
        reserveRun(trx, batch, model, { run_id: runId, request_id: `req-${runId.slice(0, 8)}`, owner_id: ownerId, key_id: keyId, input: '', api_version: 'v1', status: 'running', traceparent: null, created_at: now, kind: 'sync', format: 'chat', started_at: now, deadline_at: deadline }),
      );
      if (relayed) {
        const a = await s.services.relay.relay({ format: 'chat', body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, caller: callerOf(ownerId, model), requestId: runId });
        assert.equal(a.kind, 'json');
      }
      return runId;
    };
    const w0 = await walletOf(s, 'acme');
    const expired = await admit(s, acme, 'gpt-4o');
    const charged = await crashed(Date.now() + 60_000, true);
    const unseen = await crashed(Date.now() + 60_000, false);
    assert.equal((await walletOf(s, 'acme')).reserved, 1500);
    const logged = await st.gateway.relay.engine.summaryOf(charged, { issuer: 'edge', subject: `owner-${ownerId}` });
    assert.equal(logged?.quota, CHAT_COST);
    assert.equal(await st.gateway.relay.engine.summaryOf(unseen, { issuer: 'edge', subject: `owner-${ownerId}` }), null);
    assert.deepEqual(await reconcile(s.ctx, s.services.relay, { now: Date.now() - 1 }), [], 'nothing is overdue yet');

    const done = await reconcile(s.ctx, s.services.relay, { now: Date.now() + 2 * 3600_000 });
    assert.deepEqual(done.sort((a, b) => a.runId.localeCompare(b.runId)), [
      { runId: expired.runId, outcome: 'released', charged: 0 },
      { runId: charged, outcome: 'charged', charged: logged!.quota },
      { runId: unseen, outcome: 'released', charged: 0 },
    ].sort((a, b) => a.runId.localeCompare(b.runId)));
    const rows = new Map((await Promise.all([expired.runId, charged, unseen].map((id) => runRow(s, id)))).map((r) => [r.run_id, r]));
    assert.deepEqual([rows.get(expired.runId)!.status, rows.get(expired.runId)!.error_code], ['failed', 'reservation_expired']);
    assert.deepEqual([rows.get(charged)!.status, Number(rows.get(charged)!.cost), Number(rows.get(charged)!.prompt_tokens), Number(rows.get(charged)!.completion_tokens)], ['succeeded', logged!.quota, logged!.usage.prompt_tokens, logged!.usage.completion_tokens]);
    assert.deepEqual([rows.get(unseen)!.status, Number(rows.get(unseen)!.cost), rows.get(unseen)!.error_code], ['failed', 0, 'run_interrupted']);
    assert.deepEqual((await settlementsOf(s, expired.runId)).map((x) => x.source), ['expiry']);
    assert.deepEqual((await settlementsOf(s, charged)).map((x) => x.source), ['reconcile']);
    assert.deepEqual(await walletOf(s, 'acme'), { ...w0, balance: w0.balance - CHAT_COST, revision: w0.revision + 6 });
    assert.deepEqual(await reconcile(s.ctx, s.services.relay, { now: Date.now() + 2 * 3600_000 }), [], 'settled runs are not reconciled again');

    // The operator's CLI (its own process, the gateway's internal API): what is past its deadline now.
    const late = await admit(s, acme, 'gpt-4o');
    await s.ctx.db.updateTable('edge_runs').set({ deadline_at: Date.now() - 1000 }).where('run_id', '=', late.runId).execute();
    const lateSync = await crashed(Date.now() - 1, true);
    const cli = await s.cli('edge', 'reconcile');
    assert.equal(cli.error, null);
    assert.deepEqual(cli.lines.slice(0, -1).sort(), [`${late.runId}\treleased\t0`, `${lateSync}\tcharged\t${CHAT_COST}`].sort());
    assert.equal(cli.lines.at(-1), '2 run(s) reconciled: 1 charged, 1 released');
    assert.deepEqual((await s.cli('edge', 'reconcile')).lines, ['0 run(s) reconciled: 0 charged, 0 released']);
    assert.deepEqual(await walletOf(s, 'acme'), { ...w0, balance: w0.balance - 2 * CHAT_COST, revision: w0.revision + 10 });
  });

  test('per-owner concurrency (EDGE_OWNER_CONCURRENCY=1): a second call while a stream is in flight is 429; the per-key rate limit still applies', async () => {
    const b = await startEdge(v, {
      shareWith: { dataDir: s.dataDir, databaseUrl: s.databaseUrl },
      env: { EDGE_RELAY_URL: st.gateway.url, EDGE_RELAY_TOKEN_KEY: RELAY_SECRET, EDGE_OWNER_CONCURRENCY: '1', EDGE_RATE_LIMIT_PER_MINUTE: '8' },
    });
    const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
    try {
      const chat = (token: string, model: string, stream = false, signal?: AbortSignal) =>
        fetch(`${b.url}/v1/chat/completions`, { method: 'POST', signal, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) }) });
      const syncRun = async (res: Response) => (await s.ctx.db.selectFrom('edge_runs').selectAll().where('request_id', '=', res.headers.get('x-request-id')!).executeTakeFirstOrThrow()).run_id;
      const ended = (runId: string) => until('the call is settled', async () => ['succeeded', 'failed', 'cancelled'].includes((await runRow(s, runId)).status));
      const key = await b.issueKey('acme');
      const ownerId = await ownerIdOf(s, 'acme');
      const w0 = await walletOf(s, 'acme');

      const first = await chat(key, 'slow-model', true);
      assert.equal(first.status, 200);
      const reader = first.body!.getReader();
      readers.push(reader);
      assert.match(new TextDecoder().decode((await reader.read()).value), /first/);
      const refused = await chat(key, 'gpt-4o');
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as any).error.code, 'concurrency_limited');
      slow.release();
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
      assert.match(rest, / last/);
      const firstRun = await syncRun(first);
      await ended(firstRun);
      const firstCost = Number((await runRow(s, firstRun)).cost);
      assert.equal(firstCost, (await st.gateway.relay.engine.summaryOf(firstRun, { issuer: 'edge', subject: `owner-${ownerId}` }))!.quota);
      assert.ok(firstCost > 0);
      const next = await chat(key, 'gpt-4o');
      assert.equal(next.status, 200, 'the slot is free again once the stream ended');
      await ended(await syncRun(next));

      // A client that goes away mid-stream: the call is settled (what the gateway logged) and the slot freed.
      const abort = new AbortController();
      const gone = await chat(key, 'slow-model', true, abort.signal);
      await gone.body!.getReader().read();
      abort.abort();
      const goneRun = await syncRun(gone);
      await ended(goneRun);
      const goneSettled = await runRow(s, goneRun);
      assert.equal(goneSettled.status, 'cancelled');
      assert.equal(Number(goneSettled.cost), (await st.gateway.relay.engine.summaryOf(goneRun, { issuer: 'edge', subject: `owner-${ownerId}` }))!.quota);
      // A consumer that stops pulling (return(), as the answer writer does when its client is gone as a piece
      // arrives): the relay's summary still settles, so the call is settled and the slot freed.
      const left = await b.services.calls.call({ identity: { keyId: parseCredential(key)!.keyId, ownerId, owner: 'acme', token: null, ownerSuspended: false }, format: 'chat', body: { model: 'slow-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }, requestId: 'abandoned-1', signal: new AbortController().signal });
      assert.equal(left.kind, 'stream');
      const pieces = (left as Extract<typeof left, { kind: 'stream' }>).pieces[Symbol.asyncIterator]();
      assert.match(String((await pieces.next()).value), /first/);
      await pieces.return!(undefined);
      const leftRun = (await s.ctx.db.selectFrom('edge_runs').select('run_id').where('request_id', '=', 'abandoned-1').executeTakeFirstOrThrow()).run_id;
      await ended(leftRun);
      const leftSettled = await runRow(s, leftRun);
      assert.equal(leftSettled.status, 'cancelled');
      assert.equal(Number(leftSettled.cost), (await st.gateway.relay.engine.summaryOf(leftRun, { issuer: 'edge', subject: `owner-${ownerId}` }))!.quota);
      const third = await chat(key, 'gpt-4o');
      assert.equal(third.status, 200);
      await ended(await syncRun(third));
      assert.deepEqual(await walletOf(s, 'acme'), { ...w0, balance: w0.balance - firstCost - 2 * CHAT_COST - Number(goneSettled.cost) - Number(leftSettled.cost), revision: w0.revision + 10 });

      // Five requests of this key so far; the limit is eight a minute per key, not per owner.
      for (let i = 0; i < 3; i++) assert.equal((await b.request('GET', '/v1/models', { token: key })).status, 200);
      const limited = await chat(key, 'gpt-4o');
      assert.equal(limited.status, 429);
      assert.equal(((await limited.json()) as any).error.code, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal((await chat(await b.issueKey('acme'), 'gpt-4o')).status, 200, 'another key of the owner is not limited');
    } finally {
      // Streams still open (a failed assertion) would hold the instance's close until their keep-alive ends.
      slow.release();
      for (const r of readers) await r.cancel().catch(() => {});
      await b.close();
    }
  });

  test('edge usage and edge wallet show print an owner\'s numbers', async () => {
    const meter = await s.issueKey('meter');
    for (const model of ['gpt-4o', 'gpt-4o', 'broken-model']) await admit(s, meter, model);
    await work();
    await cancel((await admit(s, meter, 'gpt-4o')).requestId, meter);
    const sync = await s.request('POST', '/v1/chat/completions', { token: meter, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(sync.status, 200);
    assert.equal((await view(sync.headers.get('x-request-id')!, meter)).json.error.code, 'run_not_found', 'E02 shows admitted runs only');
    await admit(s, meter, 'gpt-4o'); // still reserved
    const day = new Date().toISOString().slice(0, 10);
    const usage = await s.cli('edge', 'usage', '--owner', 'meter');
    assert.equal(usage.error, null);
    assert.deepEqual(usage.lines, [
      'day\tmodel\tcalls\tfailed\tprompt_tokens\tcompletion_tokens\tcost',
      `${day}\tbroken-model\t1\t1\t0\t0\t0`,
      `${day}\tgpt-4o\t4\t1\t300\t60\t${3 * CHAT_COST}`,
    ]);
    const w = await walletOf(s, 'meter');
    const balance = START - 3 * CHAT_COST;
    assert.deepEqual((await s.cli('edge', 'wallet', 'show', '--owner', 'meter')).lines, [
      `wallet ${w.walletId} of meter: balance ${balance}, reserved 500, available ${balance - 500}; settled 5 run(s): ${3 * CHAT_COST} charged of ${4 * 500 + 100} reserved`,
    ]);
    assert.match((await s.cli('edge', 'usage', '--owner', 'nobody')).error ?? '', /no owner nobody/);
    assert.deepEqual((await s.cli('edge', 'wallet', 'show', '--owner', 'nobody')).lines, ['no wallet for nobody']);
  });
});
