import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function until(what: string, check: () => boolean | Promise<boolean>, limitMs = 90_000) {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `tsx src/cli.ts edge dispatch` as its own process, on the edge's database; its output is kept. Node runs
 * with tsx as a loader (not the tsx wrapper, which would leave its node child running after a SIGKILL).
 */
function dispatcherProcess(env: Record<string, string>) {
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'edge', 'dispatch'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c) => output.push(String(c)));
  child.stderr!.on('data', (c) => output.push(String(c)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return { child, output, exited };
}

eachDatabase('edge dispatcher crash (kill -9)', (variant) => {
  let s: EdgeServer;
  const children: ChildProcess[] = [];
  before(async () => {
    s = await startEdge(variant);
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await s.close();
  });

  test('a dispatcher killed while a receiver holds a delivery open loses nothing: a new one delivers every event', async () => {
    // The receiver holds the first request open (never answers it) and answers 200 to every other one.
    const received: { id: string; answered: boolean }[] = [];
    const held: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id']);
        if (received.length === 0) {
          received.push({ id, answered: false });
          held.push(res);
          return;
        }
        received.push({ id, answered: true });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
    try {
      await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1');
      await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100');
      const added = await s.cli('edge', 'webhook', 'add', '--owner', 'acme', '--url', url);
      const secret = added.lines.at(-1)!;
      const key = await s.issueKey('acme');
      for (let i = 0; i < 3; i++) {
        const r = await s.respond(key, { publicModelId: 'gpt-test', input: `run ${i}` }, { 'idempotency-key': crypto.randomUUID() });
        assert.equal(r.status, 202);
      }
      const events = (await s.ctx.db.selectFrom('edge_outbox').select('event_id').execute()).map((e) => e.event_id);
      assert.equal(events.length, 6);

      const env = { ...s.env, LOG_LEVEL: 'info', EDGE_DISPATCH_INTERVAL_MS: '50', EDGE_DISPATCH_LEASE_MS: '3000', EDGE_WEBHOOK_TIMEOUT_MS: '2500' };
      const first = dispatcherProcess(env);
      children.push(first.child);
      await until('the receiver holds a delivery', () => received.length > 0);
      first.child.kill('SIGKILL');
      assert.equal(await first.exited, -1);
      const heldId = received[0]!.id;
      // The held row is still leased by the dead dispatcher: not delivered.
      const heldRow = await s.ctx.db.selectFrom('edge_deliveries').selectAll().where('event_id', '=', heldId).executeTakeFirstOrThrow();
      assert.equal(heldRow.status, 'pending');
      assert.notEqual(heldRow.lease_owner, null);

      const second = dispatcherProcess(env);
      children.push(second.child);
      const delivered = async () => (await s.ctx.db.selectFrom('edge_deliveries').select('status').execute()).every((d) => d.status === 'delivered');
      await until('every delivery delivered', delivered);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);

      // At least once: every event answered 200 at least once; the held one was sent again with the same id.
      for (const id of events) assert.ok(received.some((r) => r.id === id && r.answered), `event ${id} never delivered`);
      assert.ok(received.filter((r) => r.id === heldId).length >= 2);
      assert.ok(received.some((r) => r.id === heldId && r.answered));
      const logs = first.output.join('') + second.output.join('');
      assert.ok(!logs.includes(secret), 'the webhook secret in a dispatcher log');
    } finally {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
