import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { errorCatalog } from '../../contract/errors/index.js';
import { captureLog } from '../../../test/helpers/log-capture.js';
import { createHttpApp } from '../http/app.js';
import { createLogger } from './logger.js';

async function linesOf(level: string) {
  const cap = captureLog();
  const log = createLogger(level, cap.stream).child({ deployable: 'unit' });
  const app = createHttpApp({ logger: log, trustProxy: false, bodyLimit: 1024, catalog: errorCatalog });
  app.get('/x/:id', async (req) => {
    req.log.info({ body: { password: 'hunter2', token: 'tok-123' } }, 'handler');
    return { ok: 1 };
  });
  await app.inject({ url: '/x/5?code=abc-secret', headers: { authorization: 'Bearer bearer-secret', 'x-request-id': 'rid-1' } });
  await app.inject({ url: '/nope?token=query-secret' });
  await app.close();
  await new Promise((r) => setImmediate(r));
  return cap.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('request lines keep their shape and bindings; every other line is still redacted', async () => {
  const lines = await linesOf('info');
  const text = JSON.stringify(lines);
  for (const secret of ['hunter2', 'tok-123', 'abc-secret', 'bearer-secret', 'query-secret']) assert.ok(!text.includes(secret), secret);

  const handler = lines.find((l) => l.msg === 'handler')!;
  assert.deepEqual(handler.body, { password: '[redacted]', token: '[redacted]' });
  assert.equal(handler.deployable, 'unit');

  const requests = lines.filter((l) => l.msg === 'request');
  assert.equal(requests.length, 2);
  const [first, second] = requests as [Record<string, unknown>, Record<string, unknown>];
  assert.deepEqual(Object.keys(first), ['level', 'time', 'pid', 'hostname', 'deployable', 'reqId', 'request', 'status', 'ms', 'msg']);
  assert.equal(first.level, 30);
  assert.equal(first.reqId, 'rid-1');
  assert.deepEqual(first.request, { method: 'GET', route: '/x/:id', ip: '127.0.0.1' });
  assert.equal(first.status, 200);
  assert.deepEqual(second.request, { method: 'GET', route: '/nope', ip: '127.0.0.1' });
  assert.equal(second.status, 404);
});

test('LOG_LEVEL above info drops the request line too', async () => {
  assert.deepEqual(await linesOf('warn'), []);
  assert.deepEqual(await linesOf('silent'), []);
});

test('secret-bearing keys are redacted at the top level and one level down', async () => {
  const cap = captureLog();
  const log = createLogger('info', cap.stream);
  log.info({ token: 'tok-top-secret', password: 'pw-top-secret', nested: { code: '123456-secret', key: 'sk-nested-secret' } }, 'x');
  await new Promise((r) => setImmediate(r));
  const text = cap.text();
  assert.ok(text.includes('[redacted]'));
  for (const s of ['tok-top-secret', 'pw-top-secret', '123456-secret', 'sk-nested-secret']) assert.ok(!text.includes(s), s);
});

/** Runs a small program that logs through stdoutDestination and returns what reached its standard output. */
function runLogging(program: string, env: Record<string, string> = {}) {
  const script = `import { createLogger, stdoutDestination } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).pathname)};\n${program}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
  return { stdout: r.stdout, status: r.status };
}

test('buffered standard output still writes every line: on exit, after an uncaught exception, and within a second while running', () => {
  const normal = runLogging(`const log = createLogger('info', stdoutDestination(4096)); for (let i = 0; i < 3; i++) log.info({ i }, 'line');`);
  assert.equal(normal.status, 0);
  assert.equal(normal.stdout.trim().split('\n').length, 3);

  const crash = runLogging(`const log = createLogger('info', stdoutDestination(4096)); log.info('before the crash'); setTimeout(() => { throw new Error('boom'); }, 10);`);
  assert.notEqual(crash.status, 0);
  assert.match(crash.stdout, /before the crash/);

  // A hard kill after 1.5 s skips the exit handler: only the periodic flush can have written the line.
  const running = runLogging(
    `const log = createLogger('info', stdoutDestination(4096)); log.info('while running'); setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1500);`,
  );
  assert.match(running.stdout, /while running/);
});

test('LOG_BUFFER_BYTES=0 writes each line synchronously (nothing is left to lose on a hard kill)', () => {
  const r = runLogging(`const log = createLogger('info', stdoutDestination(0)); log.info('synchronous'); process.kill(process.pid, 'SIGKILL');`);
  assert.match(r.stdout, /synchronous/);
});
