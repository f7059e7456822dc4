import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/config/read.js';
import { startAccount, type AccountServer } from '../helpers/account.js';

const sqlite = { name: 'sqlite' as const };

describe('HTTP platform of the account service', () => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(sqlite, { env: { CRITICAL_RATE_LIMIT_ENABLED: 'true', CRITICAL_RATE_LIMIT: '3', CRITICAL_RATE_LIMIT_DURATION: '60' } });
    await s.createUser('plat', 'platform password');
  });
  after(() => s.close());

  test('every response carries a request id; a valid incoming one is kept', async () => {
    const r = await s.browser().get('/api/user/login/encryption-key');
    assert.match(r.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    const mine = await s.browser().get('/api/user/login/encryption-key', { 'x-request-id': 'trace-123' });
    assert.equal(mine.headers.get('x-request-id'), 'trace-123');
    const bad = await s.browser().get('/api/user/login/encryption-key', { 'x-request-id': 'bad id with spaces' });
    assert.notEqual(bad.headers.get('x-request-id'), 'bad id with spaces');
  });

  test('unknown routes answer the envelope with 404 NOT_FOUND', async () => {
    const r = await s.browser().get('/api/nope');
    assert.equal(r.status, 404);
    assert.deepEqual(Object.keys(r.json).sort(), ['code', 'message', 'success']);
    assert.equal(r.json.code, 'NOT_FOUND');
  });

  test('the critical bucket limits login per IP with 429 RATE_LIMITED and Retry-After', async () => {
    const codes: number[] = [];
    let last: Awaited<ReturnType<ReturnType<AccountServer['browser']>['login']>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await s.browser().login('plat', 'wrong password');
      codes.push(last.status);
    }
    assert.deepEqual(codes.slice(0, 2), [200, 200]);
    assert.equal(codes[4], 429);
    assert.equal(last!.json.code, 'RATE_LIMITED');
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
  });

  test('/healthz, /readyz, /metrics and /api/openapi.json', async () => {
    const b = s.browser();
    assert.equal((await b.get('/healthz')).json.data.status, 'ok');
    const ready = await b.get('/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.json.data.database, 'ok');
    const metrics = await b.get('/metrics');
    assert.match(metrics.text, /http_requests_total\{.*operation="A25"/);
    const doc = (await b.get('/api/openapi.json')).json;
    assert.equal(doc.openapi, '3.1.0');
    const login = doc.paths['/api/user/login'].post;
    assert.equal(login.operationId, 'A25_login');
    assert.equal(login['x-operation'], 'A25');
    assert.equal(login['x-state'], 'implemented');
    assert.ok(doc.paths['/api/user/sessions/{sid}'].delete);
    const proxied = await b.get('/metrics', { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(proxied.status, 403, 'a request a proxy forwarded is not from this host');
    assert.equal(proxied.json.code, 'OPS_LOOPBACK_ONLY');
  });
});

describe('OPS_TOKEN guards /metrics and /api/openapi.json', () => {
  const token = 'ops-token-0123456789abcdef0123456789';
  let s: AccountServer;
  before(async () => {
    s = await startAccount(sqlite, { env: { OPS_TOKEN: token } });
  });
  after(() => s.close());

  test('the bearer token is required, loopback included; health stays open', async () => {
    const b = s.browser();
    for (const path of ['/metrics', '/api/openapi.json']) {
      const denied = await b.get(path);
      assert.equal(denied.status, 401, path);
      assert.equal(denied.json.code, 'OPS_TOKEN_REQUIRED');
      assert.equal((await b.get(path, { authorization: `Bearer ${token}` })).status, 200, path);
    }
    assert.equal((await b.get('/healthz')).status, 200);
  });
});

describe('ENABLED_OPERATIONS and EXPLICIT_IDENTITY', () => {
  test('operations outside ENABLED_OPERATIONS answer 404 OPERATION_DISABLED', async () => {
    const s = await startAccount(sqlite, { env: { ENABLED_OPERATIONS: 'A25,A24,A23,A43,A44,A45' } });
    try {
      const r = await s.browser().post('/api/user/register', { username: 'x', password: 'y' });
      assert.equal(r.status, 404);
      assert.equal(r.json.code, 'OPERATION_DISABLED');
      assert.equal((await s.browser().get('/api/user/login/encryption-key')).json.code, 'OPERATION_DISABLED');
      await s.createUser('enabled', 'enabled password');
      assert.equal((await s.browser().login('enabled', 'enabled password')).json.success, true);
    } finally {
      await s.close();
    }
  });

  test('with EXPLICIT_IDENTITY the New-Api-User header must name the authenticated user', async () => {
    const s = await startAccount(sqlite, { env: { EXPLICIT_IDENTITY: 'true' } });
    try {
      const id = await s.createUser('explicit', 'explicit password');
      const b = s.browser();
      await b.login('explicit', 'explicit password');
      const missing = await b.get('/api/user/sessions');
      assert.equal(missing.status, 401);
      assert.equal(missing.json.code, 'AUTH_EXPLICIT_IDENTITY');
      assert.equal((await b.get('/api/user/sessions', { 'new-api-user': String(id + 1) })).status, 401);
      assert.equal((await b.get('/api/user/sessions', { 'new-api-user': String(id) })).json.success, true);
    } finally {
      await s.close();
    }
  });
});

describe('configuration', () => {
  test('bad values fail with a message naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ ACCOUNT_PORT: 'abc' }, /ACCOUNT_PORT/],
      [{ ACCOUNT_PORT: '70000' }, /ACCOUNT_PORT/],
      [{ SESSION_COOKIE_SECURE: 'maybe' }, /SESSION_COOKIE_SECURE/],
      [{ USER_SESSION_LIMIT_POLICY: 'random' }, /USER_SESSION_LIMIT_POLICY/],
      [{ SESSION_TRUSTED_ORIGINS: 'https://a.example/path' }, /SESSION_TRUSTED_ORIGINS/],
      [{ SERVICES: 'account,billing' }, /SERVICES/],
      [{ ACCOUNT_DATABASE_URL: 'oracle://x' }, /ACCOUNT_DATABASE_URL/],
      [{ NODE_ENV: 'production' }, /SESSION_SECRET/],
      [{ SESSION_SECRET: 'short' }, /SESSION_SECRET/],
      [{ REDIS_URL: 'http://x' }, /REDIS_URL/],
      [{ OPS_TOKEN: 'too-short' }, /OPS_TOKEN/],
    ];
    for (const [env, pattern] of cases) {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && pattern.test((e as Error).message));
    }
  });

  test('defaults match the documented contract', () => {
    const c = loadConfig({});
    assert.deepEqual(c.services, ['account', 'gateway']);
    assert.equal(c.account.port, 3000);
    assert.equal(c.account.host, '0.0.0.0');
    assert.equal(c.gateway.port, 3001);
    assert.equal(c.gateway.host, '127.0.0.1');
    assert.equal(c.sessions.activeLimit, 50);
    assert.equal(c.sessions.issuanceLimit, 100);
    assert.equal(c.sessions.issuanceWindowSeconds, 86400);
    assert.equal(c.sessions.limitPolicy, 'reject');
    assert.equal(c.sessions.accessTokenTtlSeconds, 900);
    assert.equal(c.sessions.sessionTtlSeconds, 2592000);
    assert.equal(c.sessions.refreshReuseGraceSeconds, 30);
    assert.equal(c.rateLimit.critical, 20);
    assert.equal(c.rateLimit.criticalDuration, 1200);
    assert.equal(c.rateLimit.refresh, 120);
    assert.equal(c.explicitIdentity, false);
    assert.match(c.account.databaseUrl, /^sqlite:\/\/.*account\.sqlite$/);
  });
});
