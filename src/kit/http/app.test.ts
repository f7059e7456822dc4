import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import { createHttpApp } from './app.js';
import { kitErrors } from './errors.js';

function echoApp() {
  const app = createHttpApp({ logger: createLogger('silent'), trustProxy: false, bodyLimit: 1024 * 1024, catalog: kitErrors });
  app.post('/echo', async () => ({ ok: true }));
  return app;
}

test('a NUL at the bottom of a body nested 100 000 deep: 400 INVALID_PARAMETERS, not a stack overflow', async () => {
  const app = echoApp();
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
