import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { sql } from 'kysely';
import pino from 'pino';
import { CustomerRefusal, type CustomerPort } from '../../../src/contract/customer.js';
import { CUSTOMER_PORT_WIRE } from '../../../src/contract/customer-wire.js';
import { httpCustomerPort } from '../../../src/account/customers/http-port.js';
import { signWorkloadToken } from '../../../src/kit/crypto/workload-token.js';
import { AppError } from '../../../src/kit/http/errors.js';
import { loadConfig } from '../../../src/config/index.js';
import { createRuntime } from '../../../src/runtime.js';
import { buildServices } from '../../../src/services.js';
import { startEdge, type EdgeServer } from '../../helpers/edge.js';
import { captureLog } from '../../helpers/log-capture.js';
import { Browser } from '../../helpers/http.js';
import { SESSION_SECRET } from '../../helpers/account.js';
import { eachDatabase, freshDatabase, tempDir, variants, type Variant } from '../../helpers/services.js';

const SECRET = 'customer-api-test-secret-0123456789abcdef';
const EDGE_ENV = { EDGE_CUSTOMER_TOKEN_SECRET: SECRET };
const SETTINGS = { name: 'laptop', expired_time: -1, remain_quota: 10_000, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };

/** A CustomerPort over HTTP to `url`, logging into its own capture. */
function portTo(url: string, o: { key?: string; timeoutMs?: number } = {}) {
  const log = captureLog();
  const port = httpCustomerPort({ url, tokenKey: o.key ?? SECRET, timeoutMs: o.timeoutMs ?? 5000, log: pino({ level: 'debug' }, log.stream) });
  return { port, log };
}

/** What a call ended with: its value, or the refusal's reason and detail. */
async function outcome<T>(call: () => Promise<T>): Promise<{ value: T } | { refused: string; detail: string }> {
  try {
    return { value: await call() };
  } catch (e) {
    if (e instanceof CustomerRefusal) return { refused: e.reason, detail: e.detail };
    throw e;
  }
}

async function refusalOf(call: () => Promise<unknown>): Promise<CustomerRefusal> {
  try {
    await call();
  } catch (e) {
    assert.ok(e instanceof CustomerRefusal, `not a CustomerRefusal: ${String(e)}`);
    return e;
  }
  assert.fail('the call was not refused');
}

function ER01(edge: EdgeServer, method: string, args: unknown[], headers: Record<string, string> = {}) {
  return edge.request('POST', `/internal/v1/customer/${method}`, { body: { args }, headers });
}

function handMade(claims: { iat: number; exp: number; aud?: string; iss?: string }, secret = SECRET, alg = 'HS256') {
  return new SignJWT({})
    .setProtectedHeader({ alg })
    .setIssuer(claims.iss ?? 'account')
    .setSubject('account')
    .setAudience(claims.aud ?? 'edge-customer')
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(new TextEncoder().encode(secret));
}

/** A trigger answering every update of edge_wallets with the database's own lock wait timeout error. */
function lockTimeoutTrigger(v: Variant) {
  if (v.name === 'postgres') {
    return {
      create: [
        `create function t_lock_timeout() returns trigger language plpgsql as $$ begin raise exception 'lock timeout' using errcode = 'lock_not_available'; end $$`,
        'create trigger t_lock_timeout before update on edge_wallets for each row execute function t_lock_timeout()',
      ],
      drop: 'drop function t_lock_timeout() cascade',
    };
  }
  return {
    create: [`create trigger t_lock_timeout before update on edge_wallets for each row signal sqlstate 'HY000' set mysql_errno = 1205, message_text = 'Lock wait timeout exceeded'`],
    drop: 'drop trigger t_lock_timeout',
  };
}

// The account service and the edge apart: the customer port over the edge's internal route (ER01) answers
// what the port answers in process, refusals included; the route takes only the account service's workload
// token, from a direct loopback peer.
eachDatabase('customer port over HTTP', (v) => {
  let edge: EdgeServer;
  let http: ReturnType<typeof portTo>;
  let local: CustomerPort;
  const keys: string[] = [];

  before(async () => {
    edge = await startEdge(v, { env: EDGE_ENV });
    http = portTo(edge.url);
    local = edge.services.customers;
  });
  after(async () => {
    const all = `${edge.everything()}\n${http.log.text()}`;
    assert.ok(!all.includes(SECRET), 'the token key reached a log or an answer');
    for (const key of keys) assert.ok(!all.includes(key), 'a full key reached a log or an answer');
    await edge.close();
  });

  test('a round trip of wallet and token methods answers what the port answers in process (Maps included)', async () => {
    const granted = await http.port.grant(7, 5000, 'http-test:1', 'system:test', 'starting balance');
    assert.deepEqual(granted, await local.balance(7));
    assert.equal(granted.quota, 5000);
    assert.deepEqual(await http.port.grant(7, 5000, 'http-test:1', 'system:test', 'again'), granted, 'a retried grant adds nothing');
    assert.deepEqual(await http.port.balance(7), granted);

    const balances = await http.port.balances([7, 8]);
    assert.ok(balances instanceof Map);
    assert.deepEqual(balances, await local.balances([7, 8]));
    assert.deepEqual(balances.get(8), { quota: 0, used_quota: 0, request_count: 0 });

    const created = await http.port.createToken(7, SETTINGS);
    keys.push(created.key);
    assert.equal(created.token.name, 'laptop');
    assert.ok(!created.token.key.includes(created.key.slice(8)), 'the token view is masked');
    const id = created.token.id;
    assert.deepEqual(await http.port.token(7, id), await local.token(7, id));
    assert.deepEqual(await http.port.listTokens(7, { page: 1, size: 10 }), await local.listTokens(7, { page: 1, size: 10 }));
    assert.deepEqual(await http.port.searchTokens(7, 'lap', '', { page: 1, size: 10 }), await local.searchTokens(7, 'lap', '', { page: 1, size: 10 }));

    const revealed = await http.port.revealKeys(7, [id]);
    assert.ok(revealed instanceof Map);
    assert.deepEqual([...revealed], [[id, created.key]]);

    const disabled = await http.port.setTokenStatus(7, id, 2);
    assert.equal(disabled.status, 2);
    const renamed = await http.port.updateToken(7, id, { ...SETTINGS, name: 'desk' });
    assert.equal(renamed.name, 'desk');
    assert.deepEqual(renamed, await local.token(7, id));
    assert.equal(await http.port.deleteTokens(7, [id]), 1);
    assert.equal((await local.listTokens(7, { page: 1, size: 10 })).total, 0);

    const set = await http.port.setQuota(7, 1234, 'account:1', 'admin edit');
    assert.equal(set.quota, 1234);
    assert.deepEqual(await local.balance(7), set);
  });

  test("refusals keep their reason and the port's own detail", async () => {
    const created = await http.port.createToken(9, { ...SETTINGS, name: 'once' });
    keys.push(created.key);
    const id = created.token.id;
    // Another user's token: not found, and untouched.
    assert.equal((await refusalOf(() => http.port.token(10, id))).reason, 'not_found');
    assert.deepEqual(await outcome(() => http.port.deleteTokens(10, [id])), { value: 0 });
    assert.equal((await local.token(9, id)).status, 1);
    await http.port.revealKeys(9, [id]);
    assert.equal((await refusalOf(() => http.port.revealKeys(9, [id]))).reason, 'key_already_shown');
    // The same bad value refused alike in process and over HTTP.
    const bad = { ...SETTINGS, name: '' };
    const overHttp = await outcome(() => http.port.createToken(9, bad));
    assert.ok('refused' in overHttp && overHttp.refused === 'invalid', JSON.stringify(overHttp));
    assert.deepEqual(overHttp, await outcome(() => local.createToken(9, bad)));
    assert.deepEqual(await outcome(() => http.port.balance(0)), await outcome(() => local.balance(0)));
    assert.deepEqual(await outcome(() => http.port.grant(9, -5, 'http-test:neg', 'system:test', 'x')), await outcome(() => local.grant(9, -5, 'http-test:neg', 'system:test', 'x')));
    // Every other method answers over HTTP what it answers in process (the ledger's too, served or not).
    const q = { page: 1, size: 5 };
    for (const [name, call] of [
      ['pricing', (p: CustomerPort) => p.pricing()],
      ['models', (p: CustomerPort) => p.models(9, '')],
      ['models of a group', (p: CustomerPort) => p.models(9, 'default')],
      ['logs', (p: CustomerPort) => p.logs({ ...q, userId: 9 })],
      ['topups', (p: CustomerPort) => p.topups(9, q)],
      ['listCodes', (p: CustomerPort) => p.listCodes('', q)],
    ] as [string, (p: CustomerPort) => Promise<unknown>][]) {
      assert.deepEqual(await outcome(() => call(http.port)), await outcome(() => call(local)), name);
    }
  });

  test('top-up codes, redemption, top-ups and the log over HTTP: credited once, answered as in process', async () => {
    const codes = await http.port.createCodes({ name: 'promo', quota: 700, count: 2, expired_time: 0 }, 'account:1');
    assert.equal(codes.length, 2);
    keys.push(...codes);
    const listed = await http.port.listCodes('promo', { page: 1, size: 10 });
    assert.deepEqual(listed, await local.listCodes('promo', { page: 1, size: 10 }));
    assert.equal(listed.total, 2);
    assert.ok(!JSON.stringify(listed).includes(codes[0]!), 'a listed code is not masked');
    const before = (await local.balance(11)).quota;
    assert.equal(await http.port.redeem(11, codes[0]!), 700);
    assert.equal((await refusalOf(() => http.port.redeem(11, codes[0]!))).reason, 'code_invalid', 'a used code');
    assert.equal((await refusalOf(() => http.port.redeem(12, 'not-a-code'))).reason, 'code_invalid');
    assert.equal((await local.balance(11)).quota, before + 700, 'credited exactly once');
    const second = (await local.listCodes('promo', { page: 1, size: 10 })).items.find((c) => c.status === 1)!;
    assert.ok(second, 'the unused code');
    const renamed = await http.port.updateCode(second.id, { name: 'promo-2', quota: 800, expired_time: 0 }, 'account:1');
    assert.equal(renamed.name, 'promo-2');
    assert.equal((await http.port.setCodeStatus(second.id, 2, 'account:1')).status, 2);
    assert.equal(await http.port.deleteCode(second.id, 'account:1'), undefined);
    assert.equal((await refusalOf(() => http.port.deleteCode(second.id, 'account:1'))).reason, 'not_found');

    const q = { page: 1, size: 10 };
    assert.deepEqual(await http.port.topups(11, q), await local.topups(11, q));
    assert.equal((await http.port.topups(11, q)).total, 1);
    const logs = await http.port.logs({ ...q, userId: 11, type: 1 });
    assert.deepEqual(logs, await local.logs({ ...q, userId: 11, type: 1 }));
    assert.equal(logs.total, 1);
    const now = Math.floor(Date.now() / 1000);
    assert.deepEqual(await http.port.logStat({ userId: 11 }), await local.logStat({ userId: 11 }));
    assert.deepEqual(await http.port.usage({ userId: 11, start_timestamp: now - 3600, end_timestamp: now + 60 }), await local.usage({ userId: 11, start_timestamp: now - 3600, end_timestamp: now + 60 }));
  });

  test('only the port\'s methods, with arguments of their JSON types', async () => {
    const token = await signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });
    const auth = { authorization: `Bearer ${token}` };
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope']) {
      const r = await ER01(edge, name, [], auth);
      assert.equal(r.status, 404, name);
      assert.equal(r.json.error.code, 'customer_api_unknown_method', name);
    }
    const wrong = await ER01(edge, 'redeem', [7, { key: 'TOPUP-SECRET-CODE-123' }], auth);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.json.error.code, 'customer_api_bad_arguments');
    assert.ok(!wrong.text.includes('TOPUP-SECRET-CODE-123'), 'the arguments are echoed');
    assert.equal((await ER01(edge, 'balance', [7, 8], auth)).json.error.code, 'customer_api_bad_arguments', 'too many arguments');
    assert.equal((await ER01(edge, 'balance', [], auth)).json.error.code, 'customer_api_bad_arguments', 'too few');
    const none = await edge.request('POST', '/internal/v1/customer/balance', { body: {}, headers: auth });
    assert.equal(none.status, 400);
    const ok = await ER01(edge, 'balance', [7], auth);
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { result: await local.balance(7) });
    // Bad arguments come back to the caller as a bad value.
    const viaPort = await refusalOf(() => (http.port.redeem as (...a: unknown[]) => Promise<number>)(7, { key: 'x' }));
    assert.equal(viaPort.reason, 'invalid');
  });

  test("a write whose lock wait timed out at the edge is 503 service_unavailable with Retry-After, over HTTP as in process", { skip: v.name === 'sqlite' && 'SQLite has no lock wait timeout' }, async () => {
    const token = await signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });
    await local.grant(12, 100, 'http-test:busy', 'system:test', 'starting balance');
    // The database itself answers every wallet update with its lock wait timeout (PostgreSQL 55P03, MySQL 1205).
    const trigger = lockTimeoutTrigger(v);
    for (const statement of trigger.create) await sql.raw(statement).execute(edge.ctx.db);
    try {
      const r = await ER01(edge, 'setQuota', [12, 500, 'account:1', 'busy'], { authorization: `Bearer ${token}` });
      assert.equal(r.status, 503);
      assert.equal(r.json.error.code, 'service_unavailable');
      assert.equal(r.headers.get('retry-after'), '1');
      for (const [name, port] of [['http', http.port], ['in process', local]] as const) {
        await assert.rejects(port.setQuota(12, 500, 'account:1', 'busy'), (e) => {
          assert.ok(e instanceof AppError, `${name}: ${String(e)}`);
          assert.equal(e.code, 'SERVICE_UNAVAILABLE', name);
          assert.equal(e.options.headers?.['Retry-After'], '1', name);
          return true;
        });
      }
    } finally {
      await sql.raw(trigger.drop).execute(edge.ctx.db);
    }
    assert.equal((await local.balance(12)).quota, 100, 'nothing was written');
    assert.equal((await http.port.setQuota(12, 500, 'account:1', 'free again')).quota, 500);
  });

  test('every kind of bad workload token is refused with its reason and never echoed', async () => {
    const now = Math.floor(Date.now() / 1000);
    const devKey = await edge.issueKey('machine-owner');
    keys.push(devKey);
    const cases: [string, string | null, string, RegExp][] = [
      ['missing', null, 'customer_api_token_missing', /Bearer/],
      ['a developer key', devKey, 'customer_api_token_invalid', /not a JWT/],
      ['expired', await handMade({ iat: now - 120, exp: now - 60 }), 'customer_api_token_invalid', /expired/],
      ['longer than 60 s', await handMade({ iat: now, exp: now + 300 }), 'customer_api_token_invalid', /lifetime/],
      ['the relay audience', await handMade({ iat: now, exp: now + 30, aud: 'gateway-relay' }), 'customer_api_token_invalid', /claim aud/],
      ['another issuer', await handMade({ iat: now, exp: now + 30, iss: 'edge' }), 'customer_api_token_invalid', /claim iss/],
      ['another secret', await handMade({ iat: now, exp: now + 30 }, 'x'.repeat(40)), 'customer_api_token_invalid', /signature/],
      ['another algorithm', await handMade({ iat: now, exp: now + 30 }, SECRET, 'HS512'), 'customer_api_token_invalid', /algorithm/],
    ];
    for (const [name, token, code, reason] of cases) {
      const r = await ER01(edge, 'balance', [7], token ? { authorization: `Bearer ${token}` } : {});
      assert.equal(r.status, 401, name);
      assert.equal(r.json.error.code, code, name);
      assert.match(r.json.error.message, reason, name);
      assert.ok(!('result' in r.json), name);
      if (token) assert.ok(!r.text.includes(token), `${name}: the token is echoed`);
    }
    // A workload token is no developer key on the public routes.
    const token = await signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });
    const models = await edge.request('GET', '/v1/models', { token });
    assert.equal(models.status, 401);
  });

  test('a peer that is not this host, or a request through a proxy on it, is refused even with a valid token', async () => {
    const token = await signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const remote = await edge.app.inject({ method: 'POST', url: '/internal/v1/customer/balance', remoteAddress: '10.1.2.3', headers: { ...headers, 'x-forwarded-for': '127.0.0.1' }, payload: { args: [7] } });
    assert.equal(remote.statusCode, 403);
    assert.equal(remote.json().error.code, 'customer_api_not_loopback');
    for (const h of ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host']) {
      const r = await ER01(edge, 'balance', [7], { authorization: headers.authorization, [h]: h === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' });
      assert.equal(r.status, 403, h);
      assert.equal(r.json.error.code, 'customer_api_not_loopback', h);
    }
  });
});

describe('customer port over HTTP: the edge off, unreachable, slow, or refusing the key [sqlite]', () => {
  const v = variants()[0]!;
  let on: EdgeServer;
  let off: EdgeServer;
  let eddsa: EdgeServer;
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

  before(async () => {
    on = await startEdge(v, { env: EDGE_ENV });
    off = await startEdge(v);
    eddsa = await startEdge(v, { env: { EDGE_CUSTOMER_TOKEN_PUBLIC_KEY: publicKey.export({ format: 'pem', type: 'spki' }).toString() } });
  });
  after(async () => {
    for (const e of [on, off, eddsa]) {
      assert.ok(!e.everything().includes(SECRET));
      await e.close();
    }
  });

  test('EdDSA tokens verify against the configured public key; HS256 ones are then refused', async () => {
    const good = portTo(eddsa.url, { key: privatePem });
    assert.deepEqual(await good.port.balance(3), { quota: 0, used_quota: 0, request_count: 0 });
    const hs = portTo(eddsa.url);
    assert.equal((await refusalOf(() => hs.port.balance(3))).reason, 'unavailable');
  });

  test('a refused key, an edge with the API off, an unreachable or silent edge: unavailable, the cause logged, no key anywhere', async () => {
    const wrongKey = 'w'.repeat(40);
    const wrong = portTo(on.url, { key: wrongKey });
    const refused = await refusalOf(() => wrong.port.balance(3));
    assert.equal(refused.reason, 'unavailable');
    assert.match(wrong.log.text(), /customer_api_token_invalid/);

    const offPort = portTo(off.url);
    assert.equal((await refusalOf(() => offPort.port.createToken(3, SETTINGS))).reason, 'unavailable');
    assert.match(offPort.log.text(), /customer_api_not_configured/);
    assert.match(off.log.text(), /EDGE_CUSTOMER_TOKEN_SECRET/);

    // A port nothing listens on.
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const gone = portTo(`http://127.0.0.1:${closed}`);
    assert.equal((await refusalOf(() => gone.port.balance(3))).reason, 'unavailable');
    assert.match(gone.log.text(), /ECONNREFUSED/);

    // A listener that accepts and never answers: the call ends at the timeout.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = portTo(`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, { timeoutMs: 300 });
      const started = Date.now();
      assert.equal((await refusalOf(() => slow.port.balance(3))).reason, 'unavailable');
      assert.ok(Date.now() - started < 3000, 'the timeout was not applied');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }

    for (const p of [wrong, offPort, gone]) {
      assert.ok(!p.log.text().includes(wrongKey) && !p.log.text().includes(SECRET), 'a key reached the log');
      assert.doesNotMatch(p.log.text(), /eyJ/, 'a token reached the log');
    }
    assert.ok(!refused.message.includes(wrongKey));
  });

  test('the wire table names every method of the port but the playground chat (ER02), and nothing else', () => {
    const port = on.services.customers as unknown as Record<string, unknown>;
    assert.deepEqual([...Object.keys(CUSTOMER_PORT_WIRE), 'playgroundChat'].sort(), Object.keys(port).filter((k) => typeof port[k] === 'function').sort());
  });

  test('the playground chat (ER02): a refused key or an edge with the API off is unavailable; the route takes only the workload token from loopback', async () => {
    const call = { userId: 3, group: 'default', body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, requestId: 'req-1' };
    const wrong = portTo(on.url, { key: 'w'.repeat(40) });
    assert.equal((await refusalOf(() => wrong.port.playgroundChat({ ...call, lang: 'en', signal: new AbortController().signal }))).reason, 'unavailable');
    assert.match(wrong.log.text(), /customer_api_token_invalid/);
    const offPort = portTo(off.url);
    assert.equal((await refusalOf(() => offPort.port.playgroundChat({ ...call, lang: 'en', signal: new AbortController().signal }))).reason, 'unavailable');
    assert.match(offPort.log.text(), /customer_api_not_configured/);

    const missing = await on.request('POST', '/internal/v1/customer/playground/chat', { body: call });
    assert.deepEqual([missing.status, missing.json.error.code], [401, 'customer_api_token_missing']);
    const token = await signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'account', subject: 'account', audience: 'edge-customer' });
    const proxied = await on.request('POST', '/internal/v1/customer/playground/chat', { body: call, headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '203.0.113.9' } });
    assert.deepEqual([proxied.status, proxied.json.error.code], [403, 'customer_api_not_loopback']);
    const bad = await on.request('POST', '/internal/v1/customer/playground/chat', { body: { ...call, userId: 'three' }, headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual([bad.status, bad.json.error.code], [400, 'invalid_request_body']);
    // No such model on this edge: the call itself is refused in OpenAI's shape, passed on as an answer.
    const answer = await portTo(on.url).port.playgroundChat({ ...call, lang: 'en', signal: new AbortController().signal });
    assert.ok(answer.kind === 'refused');
    assert.deepEqual([answer.status, answer.error.code, answer.error.type], [404, 'model_not_found', 'invalid_request_error']);
  });
});

/** One process of the product, as main.ts builds it, listening on loopback: its services' apps by name. */
async function startProcess(v: Variant, env: Record<string, string>) {
  const dataDir = tempDir('customer-http-');
  const accountDb = freshDatabase(v, `${dataDir}/account.sqlite`);
  const config = loadConfig({ DATA_DIR: dataDir, ACCOUNT_DATABASE_URL: accountDb.url, SESSION_SECRET, LOG_LEVEL: 'info', CRITICAL_RATE_LIMIT_ENABLED: 'false', ...env });
  const log = captureLog();
  const runtime = createRuntime(config, log.stream);
  const built = await buildServices(config, runtime);
  const urls: Record<string, string> = {};
  for (const b of built) {
    await b.app.listen({ host: '127.0.0.1', port: 0 });
    urls[b.service] = `http://127.0.0.1:${(b.app.server.address() as net.AddressInfo).port}`;
  }
  return {
    urls,
    log,
    async close() {
      for (const b of built) await b.app.close();
      await runtime.close();
      await accountDb.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

eachDatabase('the account service with the edge in another process (SERVICES=account, ACCOUNT_EDGE_URL)', (v) => {
  let edge: EdgeServer;
  let account: Awaited<ReturnType<typeof startProcess>>;
  let alone: Awaited<ReturnType<typeof startProcess>>;

  before(async () => {
    edge = await startEdge(v, { env: EDGE_ENV });
    account = await startProcess(v, { SERVICES: 'account', ACCOUNT_EDGE_URL: edge.url, ACCOUNT_EDGE_TOKEN_KEY: SECRET });
    alone = await startProcess(v, { SERVICES: 'account' });
  });
  after(async () => {
    await alone.close();
    await account.close();
    await edge.close();
  });

  test("the customer API reaches the edge's port over HTTP: a user's token lives on the edge", async () => {
    const b = new Browser(account.urls.account!);
    assert.equal((await b.post('/api/user/register', { username: 'apart', password: 'apart password 1' })).json.success, true);
    assert.equal((await b.login('apart', 'apart password 1')).json.success, true);
    const created = await b.post('/api/token/', SETTINGS);
    assert.equal(created.json.success, true, created.text);
    const self = await b.get('/api/user/self');
    const owner = await edge.services.customers.listTokens(self.json.data.id, { page: 1, size: 10 });
    assert.deepEqual(owner.items.map((t) => t.id), [created.json.data.id]);
    const listed = await b.get('/api/token/');
    assert.equal(listed.json.data.items[0].id, created.json.data.id);
    assert.equal(self.json.data.quota, 0);
    const all = `${account.log.text()}\n${edge.everything()}`;
    assert.ok(!all.includes(SECRET) && !all.includes(created.json.data.key), 'a key reached a log');
  });

  test('without ACCOUNT_EDGE_URL the customer API answers EDGE_UNAVAILABLE and a warning says what to set', async () => {
    const b = new Browser(alone.urls.account!);
    assert.equal((await b.post('/api/user/register', { username: 'lonely', password: 'lonely password 1' })).json.success, true);
    assert.equal((await b.login('lonely', 'lonely password 1')).json.success, true);
    const r = await b.get('/api/token/');
    assert.equal(r.status, 503);
    assert.equal(r.json.code, 'EDGE_UNAVAILABLE');
    assert.match(alone.log.text(), /ACCOUNT_EDGE_URL/);
    // The playground answers it in OpenAI's shape.
    const chat = await b.post('/pg/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual([chat.status, chat.json.error.code, chat.json.error.type], [503, 'EDGE_UNAVAILABLE', 'server_error']);
  });
});
