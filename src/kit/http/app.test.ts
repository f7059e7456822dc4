import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import { createHttpApp } from './app.js';
import { kitErrors } from './errors.js';

function echoApp(maxJsonDepth?: number) {
  const app = createHttpApp({ logger: createLogger('silent'), trustProxy: false, bodyLimit: 1024 * 1024, catalog: kitErrors, maxJsonDepth });
  app.post('/echo', async () => ({ ok: true }));
  app.get('/item/:id', async () => ({ ok: true }));
  return app;
}

test('a body nested deeper than the limit: 400 JSON_TOO_DEEP, brackets inside strings not counted', async () => {
  const app = echoApp();
  for (const body of ['['.repeat(129) + ']'.repeat(129), '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)]) {
    const r = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body });
    assert.equal(r.statusCode, 400, r.body);
    assert.deepEqual([r.json().code, r.json().message], ['JSON_TOO_DEEP', 'The request body nests arrays or objects deeper than 128 levels']);
  }
  for (const body of ['['.repeat(128) + ']'.repeat(128), JSON.stringify({ a: '['.repeat(500) })]) {
    assert.equal((await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body })).statusCode, 200);
  }
  await app.close();
});

test('a NUL at the bottom of a body nested 100 000 deep (a depth limit above it): 400 INVALID_PARAMETERS, not a stack overflow', async () => {
  const app = echoApp(1_000_000);
  for (const body of ['['.repeat(100_000) + '"\\u0000"' + ']'.repeat(100_000), '{"a":'.repeat(100_000) + '"\\u0000"' + '}'.repeat(100_000)]) {
    const r = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: body });
    assert.equal(r.statusCode, 400, r.body);
    assert.equal(r.json().code, 'INVALID_PARAMETERS');
  }
  // The same depth without a NUL, and a wide array with one at the end, are parsed as usual.
  const deep = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '['.repeat(100_000) + '1' + ']'.repeat(100_000) });
  assert.equal(deep.statusCode, 200, deep.body);
  const wide = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: `[${'0,'.repeat(200_000)}"\\u0000"]` });
  assert.equal(wide.statusCode, 400, wide.body);
  await app.close();
});

/** Sends raw bytes and returns the whole answer (the server closes the connection after an error). */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
  });
}

test('URLs Fastify or Node refuse themselves get the envelope with a catalog code and never repeat the URL', async () => {
  const app = echoApp();
  for (const url of ['/item/%FF?code=query-secret-1', '/item/%ED%A0%80?code=query-secret-1', '/item/%?code=query-secret-1', `/item/${'x'.repeat(300)}?code=query-secret-1`]) {
    const r = await app.inject({ method: 'GET', url });
    assert.equal(r.statusCode, 400, `${url}: ${r.body}`);
    assert.deepEqual(Object.keys(r.json()).sort(), ['code', 'message', 'success']);
    assert.equal(r.json().code, 'INVALID_PARAMETERS');
    assert.ok(!r.body.includes('query-secret-1') && !r.body.includes('FST_'), r.body);
    assert.ok(r.headers['x-request-id']);
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as net.AddressInfo).port;
  const long = await fetch(`http://127.0.0.1:${port}/item/1?code=query-secret-2&pad=${'p'.repeat(20_000)}`);
  assert.equal(long.status, 431);
  const body = await long.json();
  assert.equal(body.code, 'HEADERS_TOO_LARGE');
  assert.equal(body.success, false);
  assert.ok(!JSON.stringify(body).includes('query-secret-2'));
  const garbage = await rawExchange(port, 'GARBAGE \x01 nonsense\r\n\r\n');
  assert.match(garbage, /^HTTP\/1\.1 400 /);
  assert.equal(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)).code, 'INVALID_PARAMETERS');
  await app.close();
});
