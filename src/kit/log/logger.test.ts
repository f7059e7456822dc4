import assert from 'node:assert/strict';
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
