import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { Dispatcher } from '../../src/edge/webhooks/dispatcher.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACE = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  answered: number | null;
}

/** A webhook receiver on loopback; `answer` picks the status of each request (null: hold it open). */
async function receiver(answer: (r: Received, index: number) => number | null) {
  const received: Received[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const r: Received = { headers: req.headers, body, answered: null };
      received.push(r);
      const status = answer(r, received.length - 1);
      if (status === null) {
        held.push(res);
        return;
      }
      r.answered = status;
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    received,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Standard Webhooks verification, written here independently of the product's signer. */
function verify(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = crypto.createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature']).split(' ').some((s) => s === `v1,${expected}`);
}

async function until(what: string, check: () => Promise<boolean>, limitMs = 60_000) {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

eachDatabase('edge webhooks', (variant) => {
  let s: EdgeServer;
  let key: string;
  let n = 0;
  const secrets: string[] = [];

  before(async () => {
    s = await startEdge(variant, { env: { EDGE_WEBHOOK_BACKOFF_MS: '1', EDGE_WEBHOOK_BACKOFF_MAX_MS: '2', EDGE_WEBHOOK_MAX_ATTEMPTS: '5' } });
    await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1');
  });
  after(async () => {
    for (const secret of secrets) assert.ok(!s.everything().includes(secret), 'a webhook secret in a response or the log');
    await s.close();
  });

  /** A fresh owner with a key, credit and one endpoint at `url`; returns the key and the signing secret. */
  async function owner(url: string) {
    const name = `o${++n}`;
    await s.cli('edge', 'wallet', 'credit', '--owner', name, '--amount', '100');
    const added = await s.cli('edge', 'webhook', 'add', '--owner', name, '--url', url);
    assert.equal(added.error, null);
    const secret = added.lines.at(-1)!;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    secrets.push(secret);
    key = await s.issueKey(name);
    return { name, key, secret };
  }

  async function admit(k: string, headers: Record<string, string> = {}) {
    const r = await s.respond(k, { publicModelId: 'gpt-test', input: 'hi' }, { 'idempotency-key': crypto.randomUUID(), ...headers });
    assert.equal(r.status, 202);
    return r.json;
  }

  const eventsOfRun = (runId: string) => s.ctx.db.selectFrom('edge_outbox').selectAll().where('payload', 'like', `%${runId}%`).orderBy('sequence').execute();

  test('end to end: each event is POSTed signed (Standard Webhooks) with its id, trace and payload', async () => {
    const rx = await receiver(() => 204);
    try {
      const o = await owner(rx.url);
      const run = await admit(o.key, { traceparent: TRACE });
      const events = await eventsOfRun(run.runId);
      assert.equal(await new Dispatcher(s.ctx).drain(), 2);
      assert.equal(rx.received.length, 2);
      for (const r of rx.received) {
        assert.ok(verify(o.secret, r), 'signature does not verify');
        assert.ok(!verify(o.secret + 'x', { ...r, body: r.body + ' ' }));
        assert.match(String(r.headers['webhook-timestamp']), /^\d{10}$/);
        assert.equal(r.headers['content-type'], 'application/json');
        const [version, traceId, parent] = String(r.headers.traceparent).split('-');
        assert.equal(version, '00');
        assert.equal(traceId, TRACE_ID);
        assert.notEqual(parent, '00f067aa0ba902b7');
      }
      assert.deepEqual(rx.received.map((r) => r.headers['webhook-id']).sort(), events.map((e) => e.event_id).sort());
      const created = rx.received.map((r) => JSON.parse(r.body)).find((b) => b.type === 'run.created@2.0');
      assert.equal(created.data.runId, run.runId);
      assert.equal(created.aggregateId, run.runId);
      assert.equal(created.aggregateRevision, 1);
      const rows = await s.ctx.db.selectFrom('edge_deliveries').selectAll().where('event_id', 'in', events.map((e) => e.event_id)).execute();
      assert.deepEqual(rows.map((d) => [d.status, Number(d.attempts)]), [['delivered', 1], ['delivered', 1]]);
      assert.equal(await new Dispatcher(s.ctx).drain(), 0, 'a delivered event was sent again');
    } finally {
      await rx.close();
    }
  });

  test('a receiver failing 3 times then recovering gets the event delivered once successfully; attempts are recorded', async () => {
    let failures = 0;
    const rx = await receiver((r) => (JSON.parse(r.body).type === 'run.created@2.0' && failures++ < 3 ? 500 : 200));
    try {
      const o = await owner(rx.url);
      const run = await admit(o.key);
      const [created] = await eventsOfRun(run.runId);
      const d = new Dispatcher(s.ctx);
      const delivery = () => s.ctx.db.selectFrom('edge_deliveries').selectAll().where('event_id', '=', created!.event_id).executeTakeFirstOrThrow();
      await until('delivery', async () => {
        await d.runOnce();
        return (await delivery()).status === 'delivered';
      });
      const mine = rx.received.filter((r) => r.headers['webhook-id'] === created!.event_id);
      assert.deepEqual(mine.map((r) => r.answered), [500, 500, 500, 200]);
      const attempts = await s.ctx.db.selectFrom('edge_delivery_attempts').selectAll().where('delivery_id', '=', (await delivery()).id).orderBy('id').execute();
      assert.deepEqual(attempts.map((a) => [Number(a.attempt), a.status_code]), [[1, 500], [2, 500], [3, 500], [4, 200]]);
      assert.equal(Number((await delivery()).attempts), 4);
    } finally {
      await rx.close();
    }
  });

  test('after the attempt cap a delivery is dead; replay by event and by sequence queues it again', async () => {
    let down = true;
    const rx = await receiver(() => (down ? 503 : 200));
    try {
      const o = await owner(rx.url);
      const run = await admit(o.key);
      const events = await eventsOfRun(run.runId);
      const d = new Dispatcher(s.ctx);
      const statuses = async () => (await s.ctx.db.selectFrom('edge_deliveries').select('status').where('event_id', 'in', events.map((e) => e.event_id)).execute()).map((x) => x.status);
      await until('dead', async () => {
        await d.runOnce();
        return (await statuses()).every((x) => x === 'dead');
      });
      assert.equal(rx.received.length, 10, 'five attempts for each of two events');
      down = false;
      const one = await s.cli('edge', 'webhook', 'replay', '--event', events[0]!.event_id);
      assert.equal(one.error, null);
      assert.match(one.lines.join(), /1 event\(s\), 1 delivery/);
      await d.drain();
      assert.deepEqual((await statuses()).sort(), ['dead', 'delivered']);
      const since = await s.cli('edge', 'webhook', 'replay', '--since', String(events[1]!.sequence));
      assert.equal(since.error, null);
      await d.drain();
      assert.deepEqual(await statuses(), ['delivered', 'delivered']);
      assert.match((await s.cli('edge', 'webhook', 'replay', '--event', crypto.randomUUID())).error ?? '', /no event/);
      assert.match((await s.cli('edge', 'webhook', 'replay')).error ?? '', /exactly one/);
    } finally {
      await rx.close();
    }
  });

  test('two dispatchers never deliver the same row; a removed endpoint gets nothing more', async () => {
    const rx = await receiver(() => 200);
    try {
      const o = await owner(rx.url);
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push(await admit(o.key));
      await Promise.all([new Dispatcher(s.ctx).drain(), new Dispatcher(s.ctx).drain(), new Dispatcher(s.ctx).drain()]);
      const ids = rx.received.map((r) => r.headers['webhook-id']);
      assert.equal(ids.length, 10);
      assert.equal(new Set(ids).size, 10, 'an event was delivered twice');
      const list = await s.cli('edge', 'webhook', 'list');
      const endpointId = list.lines.find((l) => l.includes(`\t${o.name}\t`))!.split('\t')[0]!;
      assert.ok(!list.lines.join('\n').includes(o.secret));
      assert.equal((await s.cli('edge', 'webhook', 'remove', endpointId)).error, null);
      await admit(o.key);
      await new Dispatcher(s.ctx).drain();
      assert.equal(rx.received.length, 10);
    } finally {
      await rx.close();
    }
  });

  test('without EDGE_WEBHOOK_ALLOW_PRIVATE a loopback URL is refused by the address policy (recorded, nothing sent)', async () => {
    const strict = await startEdge(variant, { env: { EDGE_WEBHOOK_ALLOW_PRIVATE: 'false', EDGE_WEBHOOK_MAX_ATTEMPTS: '1' } });
    const rx = await receiver(() => 200);
    try {
      await strict.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1');
      await strict.cli('edge', 'wallet', 'credit', '--owner', 'x', '--amount', '5');
      await strict.cli('edge', 'webhook', 'add', '--owner', 'x', '--url', rx.url);
      const k = await strict.issueKey('x');
      assert.equal((await strict.respond(k, { publicModelId: 'gpt-test', input: 'a' }, { 'idempotency-key': 'a' })).status, 202);
      await new Dispatcher(strict.ctx).drain();
      assert.equal(rx.received.length, 0);
      const attempts = await strict.ctx.db.selectFrom('edge_delivery_attempts').selectAll().execute();
      assert.equal(attempts.length, 2);
      for (const a of attempts) assert.match(a.error ?? '', /^refused: /);
      assert.equal((await strict.cli('edge', 'webhook', 'add', '--owner', 'x', '--url', 'ftp://example.com/')).error?.includes('http'), true);
    } finally {
      await rx.close();
      await strict.close();
    }
  });

  test('the edge process runs its own dispatcher when EDGE_DISPATCHER is on', async () => {
    const live = await startEdge(variant, { env: { EDGE_DISPATCHER: 'true', EDGE_DISPATCH_INTERVAL_MS: '20' } });
    const rx = await receiver(() => 200);
    try {
      assert.ok(live.dispatcher);
      await live.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1');
      await live.cli('edge', 'wallet', 'credit', '--owner', 'x', '--amount', '5');
      await live.cli('edge', 'webhook', 'add', '--owner', 'x', '--url', rx.url);
      const k = await live.issueKey('x');
      assert.equal((await live.respond(k, { publicModelId: 'gpt-test', input: 'a' }, { 'idempotency-key': 'a' })).status, 202);
      await until('two deliveries', async () => rx.received.length === 2);
    } finally {
      await live.close();
      await rx.close();
    }
  });
});
