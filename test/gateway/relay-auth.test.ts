import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { parseSettings, saveSettings } from '../../src/gateway/affinity/settings.js';
import { signWorkloadToken } from '../../src/kit/crypto/workload-token.js';
import { postgresWithRedis, variants } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { RELAY_ENV, RELAY_SECRET, relay, relayToken } from '../helpers/relay.js';

const KEY = 'sk-relay-auth-KEY-0123456789';
const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

async function handMade(claims: { iat: number; exp: number; aud?: string; iss?: string; sub?: string }, secret = RELAY_SECRET, alg = 'HS256') {
  return new SignJWT({})
    .setProtectedHeader({ alg })
    .setIssuer(claims.iss ?? 'edge')
    .setSubject(claims.sub ?? 'acme')
    .setAudience(claims.aud ?? 'gateway-relay')
    .setIssuedAt(claims.iat)
    .setExpirationTime(claims.exp)
    .sign(new TextEncoder().encode(secret));
}

describe('relay internal API: workload tokens only, on loopback only (GR01–GR03) [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let eddsa: GatewayServer;
  let off: GatewayServer;
  let staffToken: string;
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');

  before(async () => {
    up = await startFakeUpstream({ 'POST /v1/chat/completions': (r, res) => r.json?.model === 'gpt-broken' ? sendJson(res, 500, { error: { message: 'down' } }) : sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }) });
    const v = variants()[0]!;
    s = await startGateway(v, { env: RELAY_ENV });
    eddsa = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_TOKEN_SECRET: '', GATEWAY_RELAY_TOKEN_PUBLIC_KEY: publicKey.export({ format: 'pem', type: 'spki' }).toString() } });
    off = await startGateway(v);
    for (const g of [s, eddsa]) {
      const root = await g.staff('root', 'root');
      assert.equal((await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'c', base_url: up.url, models: 'gpt-4o,gpt-broken', key: KEY } })).status, 200);
      await g.services.ratios.setCurrent({ model_ratio: { 'gpt-4o': 1, 'gpt-broken': 1 } });
    }
    staffToken = (await s.services.staff.issueToken('root')).token;
  });
  after(async () => {
    for (const g of [s, eddsa, off]) {
      assert.ok(!g.everything().includes(KEY), 'the channel key leaked');
      await g.close();
    }
    await up.close();
  });

  test('a valid token is served; every kind of bad token is refused with its reason and never echoed', async () => {
    assert.equal((await relay(s.url, '/chat/completions', body)).status, 200);
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, string | null, string, RegExp][] = [
      ['missing', null, 'relay_token_missing', /Bearer/],
      ['staff token', staffToken, 'relay_token_invalid', /not a JWT/],
      ['expired', await handMade({ iat: now - 120, exp: now - 60 }), 'relay_token_invalid', /expired/],
      ['longer than 60 s', await handMade({ iat: now, exp: now + 300 }), 'relay_token_invalid', /lifetime/],
      ['another audience', await handMade({ iat: now, exp: now + 30, aud: 'gateway-admin' }), 'relay_token_invalid', /claim aud/],
      ['an unknown issuer', await handMade({ iat: now, exp: now + 30, iss: 'someone' }), 'relay_token_invalid', /claim iss/],
      ['another secret', await handMade({ iat: now, exp: now + 30 }, 'x'.repeat(40)), 'relay_token_invalid', /signature/],
      ['another algorithm', await handMade({ iat: now, exp: now + 30 }, RELAY_SECRET, 'HS512'), 'relay_token_invalid', /algorithm/],
    ];
    for (const [name, token, code, reason] of cases) {
      const r = await relay(s.url, '/chat/completions', body, { token });
      assert.equal(r.status, 401, name);
      assert.equal(r.json.error.code, code, name);
      assert.match(r.json.error.message, reason, name);
      if (token) assert.ok(!r.text.includes(token), `${name}: the token is echoed`);
    }
    assert.equal(up.seen.length, 1, 'no refused call reached the upstream');
  });

  test('GR04: a caller reads the summary of its own call by request id, and no one else\'s', async () => {
    const token = await relayToken({ subject: 'owner-7' });
    const served = await fetch(`${s.url}/relay/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'run-0001' }, body: JSON.stringify(body) });
    assert.equal(served.status, 200);
    const read = async (subject: string) => fetch(`${s.url}/relay/v1/calls/run-0001`, { headers: { authorization: `Bearer ${await relayToken({ subject })}` } });
    const own = await read('owner-7');
    assert.equal(own.status, 200);
    const summary = await own.json();
    assert.equal(summary.request_id, 'run-0001');
    assert.equal(summary.usage.total_tokens, 2);
    assert.equal(summary.quota, 2);
    const other = await read('owner-8');
    assert.equal(other.status, 404);
    assert.equal((await other.json()).error.code, 'relay_call_not_found');
    // A later failed call under the same id (a retried run) does not hide the served one.
    const failed = await fetch(`${s.url}/relay/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-request-id': 'run-0001' }, body: JSON.stringify({ ...body, model: 'gpt-broken' }) });
    assert.equal(failed.status, 500);
    const again = await (await read('owner-7')).json();
    assert.equal(again.error_code, null);
    assert.equal(again.quota, 2);
  });

  test('EdDSA tokens verify against the configured public key; HS256 ones are then refused', async () => {
    const token = await signWorkloadToken({ alg: 'EdDSA', key: privateKey }, { issuer: 'edge', subject: 'acme', audience: 'gateway-relay' });
    assert.equal((await relay(eddsa.url, '/chat/completions', body, { token })).status, 200);
    assert.equal((await relay(eddsa.url, '/chat/completions', body, { token: await relayToken() })).status, 401);
  });

  test('a peer that is not on the loopback interface is refused, even with a valid token', async () => {
    const r = await s.app.inject({ method: 'POST', url: '/relay/v1/chat/completions', remoteAddress: '10.1.2.3', headers: { authorization: `Bearer ${await relayToken()}`, 'content-type': 'application/json', 'x-forwarded-for': '127.0.0.1' }, payload: body });
    assert.equal(r.statusCode, 403);
    assert.equal(r.json().error.code, 'relay_not_loopback');
  });

  test('without a configured key the internal API is off', async () => {
    const r = await relay(off.url, '/chat/completions', body);
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'relay_not_configured');
  });
});

const pg = postgresWithRedis('relay on two gateway instances sharing PostgreSQL + Redis');
if (pg) {
  describe('relay on two gateway instances sharing PostgreSQL + Redis', () => {
    let up: FakeUpstream;
    let a: GatewayServer;
    let b: GatewayServer;
    let root: StaffClient;
    const channelOf = (path: string) => path.split('/')[1];

    before(async () => {
      const answer = (name: string) => (_r: unknown, res: import('node:http').ServerResponse) => sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: name }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
      up = await startFakeUpstream({ 'POST /one/v1/chat/completions': answer('one'), 'POST /two/v1/chat/completions': answer('two') });
      a = await startGateway(pg, { env: RELAY_ENV });
      b = await startGateway(pg, { env: RELAY_ENV, shareWith: a });
      root = await a.staff('root', 'root');
      for (const name of ['one', 'two']) assert.equal((await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: 'claude-x', key: KEY } })).status, 200);
      await a.services.ratios.setCurrent({ model_ratio: { 'claude-x': 1 } });
      await saveSettings(a.ctx, parseSettings({ enabled: true, rules: [{ name: 'session', key_sources: [{ type: 'request_header', key: 'x-session' }], ttl_seconds: 60 }] }));
    });
    after(async () => {
      await b.close();
      await a.close();
      await up.close();
    });

    test('channels written on one instance serve calls on the other; the affinity entry is shared through Redis', async () => {
      const first = await relay(b.url, '/chat/completions', { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-session': 'sess-1' } });
      assert.equal(first.status, 200, first.text);
      const stuck = first.json.choices[0].message.content;
      // Wait for the fire-and-forget affinity write, then every call of that session lands on the same channel on either instance.
      for (let i = 0; i < 50 && (await a.services.affinity.stats()).total === 0; i++) await new Promise((r) => setTimeout(r, 20));
      for (let i = 0; i < 20; i++) {
        const r = await relay(i % 2 ? a.url : b.url, '/chat/completions', { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-session': 'sess-1' } });
        assert.equal(r.json.choices[0].message.content, stuck);
      }
      assert.deepEqual(new Set(up.seen.map((x) => channelOf(x.path))), new Set([stuck]));
      await Promise.all([a.relay.log.flush(), b.relay.log.flush()]);
      const logged = await a.ctx.db.selectFrom('relay_log').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(logged.n), 21, 'both instances write the shared relay log');
    });
  });
}
