import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../log/logger.js';
import { createHttpApp } from './app.js';
import { kitErrors } from './errors.js';
import { installOpsEndpoints } from './ops-endpoints.js';
import type { OpsAccess } from './ops-access.js';

const TOKEN = 'ops-token-0123456789abcdef0123456789';

function opsApp(access: OpsAccess) {
  const app = createHttpApp({ logger: createLogger('silent'), trustProxy: access.behindProxy, bodyLimit: 1024 * 1024, catalog: kitErrors });
  installOpsEndpoints(app, { name: 'test', readiness: {}, openapi: () => ({ openapi: '3.0.3' }), access });
  return app;
}

async function statusOf(app: ReturnType<typeof opsApp>, url: string, remoteAddress: string, headers: Record<string, string> = {}) {
  const r = await app.inject({ method: 'GET', url, remoteAddress, headers });
  return r.statusCode === 200 ? 200 : `${r.statusCode} ${r.json().code}`;
}

test('without OPS_TOKEN, /metrics and /api/openapi.json answer direct loopback peers only; health answers anyone', async () => {
  const app = opsApp({ token: '', behindProxy: false });
  for (const url of ['/metrics', '/api/openapi.json']) {
    assert.equal(await statusOf(app, url, '127.0.0.1'), 200, url);
    assert.equal(await statusOf(app, url, '::1'), 200, url);
    assert.equal(await statusOf(app, url, '203.0.113.9'), '403 OPS_LOOPBACK_ONLY', url);
    assert.equal(await statusOf(app, url, '10.0.0.7'), '403 OPS_LOOPBACK_ONLY', url);
    assert.equal(await statusOf(app, url, '127.0.0.1', { 'x-forwarded-for': '203.0.113.9' }), '403 OPS_LOOPBACK_ONLY', `${url} through a proxy`);
    assert.equal(await statusOf(app, url, '127.0.0.1', { forwarded: 'for=203.0.113.9' }), '403 OPS_LOOPBACK_ONLY', `${url} through a proxy`);
  }
  for (const url of ['/healthz', '/readyz']) assert.equal(await statusOf(app, url, '203.0.113.9'), 200, url);
  await app.close();
});

test('behind a trusted proxy a loopback peer is not enough', async () => {
  const app = opsApp({ token: '', behindProxy: true });
  assert.equal(await statusOf(app, '/metrics', '127.0.0.1'), '403 OPS_LOOPBACK_ONLY');
  await app.close();
});

test('with OPS_TOKEN, the bearer token is the only way in, from any peer', async () => {
  const app = opsApp({ token: TOKEN, behindProxy: true });
  for (const url of ['/metrics', '/api/openapi.json']) {
    assert.equal(await statusOf(app, url, '203.0.113.9', { authorization: `Bearer ${TOKEN}` }), 200, url);
    assert.equal(await statusOf(app, url, '203.0.113.9'), '401 OPS_TOKEN_REQUIRED', url);
    assert.equal(await statusOf(app, url, '127.0.0.1'), '401 OPS_TOKEN_REQUIRED', url);
    assert.equal(await statusOf(app, url, '127.0.0.1', { authorization: `Bearer ${TOKEN}x` }), '401 OPS_TOKEN_REQUIRED', url);
  }
  const r = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.match(r.body, /http_requests_total/);
  await app.close();
});
