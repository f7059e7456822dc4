import assert from 'node:assert/strict';
import { test } from 'node:test';
import { balanceOf, CALL_COST, CHAT_RESERVE, createToken, eventually, MODELS, tokenOf, type Customer, type Product } from '../stack.js';

const now = () => Math.floor(Date.now() / 1000);

/**
 * The edge enforces each token (expired or disabled 401, model_limits 403, allow_ips 403, remain_quota
 * exhausted refused, empty wallet 402), and takes keys only: a refused call reaches no upstream and moves no unit.
 */
export function refusalCases(product: () => Product) {
  let c: Customer;
  const FUNDS = 200_000;

  /** Calls with `key` and checks the refusal: status, code, nothing relayed, nothing charged (wallet and token). */
  async function refused(key: string, status: number, code: string | string[], opts: { tokenId?: number; body?: Record<string, unknown>; headers?: Record<string, string>; who?: Customer } = {}) {
    const p = product();
    const who = opts.who ?? c;
    const balance = await balanceOf(who);
    const token = opts.tokenId ? await tokenOf(who, opts.tokenId) : null;
    const upstream = p.upstreamCalls();
    const r = await p.chat(key, opts.body, opts.headers);
    assert.equal(r.status, status, r.text);
    const codes = Array.isArray(code) ? code : [code];
    assert.ok(codes.includes(r.json?.error?.code), `error code ${r.json?.error?.code}, expected ${codes.join(' or ')}: ${r.text}`);
    assert.ok(!r.text.includes(key), 'the refusal does not echo the key');
    // A late settlement would show within this pause.
    await new Promise((res) => setTimeout(res, 150));
    assert.equal(p.upstreamCalls(), upstream, 'not relayed');
    assert.deepEqual(await balanceOf(who), balance, 'not charged');
    if (token) {
      const t = await tokenOf(who, opts.tokenId!);
      assert.equal(t.used_quota, token.used_quota, 'the token is not charged');
      assert.equal(t.remain_quota, token.remain_quota, 'the token\'s remain_quota is not held');
    }
    return r;
  }

  async function charged(key: string, times = 1) {
    const before = await balanceOf(c);
    const r = await product().chat(key);
    assert.equal(r.status, 200, r.text);
    const after = await eventually(() => balanceOf(c), (b) => b.request_count === before.request_count + 1, 'settled');
    assert.deepEqual(after, { quota: before.quota - CALL_COST * times, used_quota: before.used_quota + CALL_COST * times, request_count: before.request_count + 1 });
  }

  test('set-up: a funded customer', async () => {
    const p = product();
    c = await p.register('limits');
    await p.fund(c, FUNDS);
  });

  test('an expired token is refused with 401 token_expired, and reads as status 3', async () => {
    const p = product();
    const t = await createToken(p, c, 'expired', { expired_time: now() - 60 });
    await refused(t.key, 401, 'token_expired', { tokenId: t.id });
    assert.equal((await tokenOf(c, t.id)).status, 3);
  });

  test('a disabled token is refused with 401 token_disabled; enabled again it is served', async () => {
    const p = product();
    const t = await createToken(p, c, 'toggled');
    const off = await c.web.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 2 } });
    assert.equal(off.json?.success, true, off.text);
    await refused(t.key, 401, 'token_disabled', { tokenId: t.id });
    const on = await c.web.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 1 } });
    assert.equal(on.json?.success, true, on.text);
    await charged(t.key);
  });

  test('a disabled user\'s keys are refused with 403 user_disabled, not relayed nor charged; enabled again they are served, and a token the user turned off stays off', async () => {
    const p = product();
    const d = await p.register('banned');
    await p.fund(d, FUNDS);
    const t = await createToken(p, d, 'in use');
    const own = await createToken(p, d, 'turned off');
    assert.equal((await d.web.request('PUT', '/api/token/?status_only=true', { body: { id: own.id, status: 2 } })).json?.success, true);
    const wallet = async () => (await p.admin.get(`/api/user/${d.id}`)).json.data.quota;
    const manage = async (action: string) => {
      const r = await p.admin.post('/api/user/manage', { id: d.id, action });
      assert.equal(r.json?.success, true, `${action}: ${r.text}`);
    };
    await manage('disable');
    const before = await wallet();
    const upstream = p.upstreamCalls();
    for (const key of [t.key, own.key]) {
      const r = await p.chat(key);
      assert.deepEqual([r.status, r.json?.error?.code], [403, 'user_disabled'], r.text);
      const models = await fetch(`${p.edgeUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(models.status, 403);
    }
    await new Promise((res) => setTimeout(res, 150));
    assert.equal(p.upstreamCalls(), upstream, 'not relayed');
    assert.equal(await wallet(), before, 'not charged');
    await manage('enable');
    assert.equal((await d.web.login(d.username, d.password)).json?.success, true);
    p.secrets.add(d.web.accessToken!);
    const served = await p.chat(t.key);
    assert.equal(served.status, 200, served.text);
    const still = await p.chat(own.key);
    assert.deepEqual([still.status, still.json?.error?.code], [401, 'token_disabled'], still.text);
    assert.equal((await tokenOf(d, own.id)).status, 2);
  });

  test('a model outside model_limits is refused with 403 model_not_allowed', async () => {
    const p = product();
    const t = await createToken(p, c, 'embeddings only', { model_limits_enabled: true, model_limits: MODELS.embedding });
    await refused(t.key, 403, 'model_not_allowed', { tokenId: t.id });
    const open = await createToken(p, c, 'chat allowed', { model_limits_enabled: true, model_limits: `${MODELS.embedding},${MODELS.chat}` });
    await charged(open.key);
  });

  test('a caller outside allow_ips is refused with 403 ip_not_allowed, also when it claims an allowed address in X-Forwarded-For', async () => {
    const p = product();
    const t = await createToken(p, c, 'office only', { allow_ips: '10.9.8.7,192.168.0.0/16' });
    await refused(t.key, 403, 'ip_not_allowed', { tokenId: t.id });
    await refused(t.key, 403, 'ip_not_allowed', { tokenId: t.id, headers: { 'x-forwarded-for': '10.9.8.7', 'x-real-ip': '10.9.8.7' } });
    const local = await createToken(p, c, 'loopback', { allow_ips: '10.9.8.7\n127.0.0.0/8' });
    await charged(local.key);
  });

  test('a token whose remain_quota cannot cover a call is refused (403 token_quota_exhausted) before and after spending', async () => {
    const p = product();
    const empty = await createToken(p, c, 'no allowance', { unlimited_quota: false, remain_quota: 0 });
    await refused(empty.key, 403, 'token_quota_exhausted', { tokenId: empty.id });
    // Exactly one call's hold: served once (charged its cost), then what is left is below the next call's hold.
    const once = await createToken(p, c, 'one call', { unlimited_quota: false, remain_quota: CHAT_RESERVE });
    await charged(once.key);
    const t = await tokenOf(c, once.id);
    assert.equal(t.remain_quota, CHAT_RESERVE - CALL_COST);
    assert.equal(t.used_quota, CALL_COST);
    await refused(once.key, 403, 'token_quota_exhausted', { tokenId: once.id });
  });

  test('an empty wallet is refused with 402 insufficient_balance', async () => {
    const p = product();
    const poor = await p.register('poor');
    const t = await createToken(p, poor, 'unfunded');
    await refused(t.key, 402, 'insufficient_balance', { tokenId: t.id, who: poor });
  });

  test('the edge takes keys only: a customer session (bearer access token or cookie) and unknown keys are refused with 401', async () => {
    const p = product();
    const session = c.web.accessToken!;
    await refused(session, 401, 'customer_session_not_accepted');
    const cookie = [...c.web.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    assert.ok(cookie, 'the login set cookies');
    const upstream = p.upstreamCalls();
    const byCookie = await fetch(`${p.edgeUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODELS.chat, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(byCookie.status, 401);
    assert.ok(['customer_session_not_accepted', 'missing_api_key'].includes(((await byCookie.json()) as any).error?.code));
    assert.equal(p.upstreamCalls(), upstream);
    await refused('svc_sk_AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', 401, 'invalid_api_key');
    await refused(`sk-${'a1'.repeat(24)}`, 401, 'invalid_api_key');
  });
}

/** Concurrent calls against one limit: the holds never lend more than the token's remain_quota or the wallet holds. */
export function concurrencyCases(product: () => Product) {
  test('8 concurrent calls on a token good for one call: one is served and charged, the others are refused and not relayed', async () => {
    const p = product();
    const c = await p.register('burst');
    await p.fund(c, 100_000);
    const t = await createToken(p, c, 'one hold', { unlimited_quota: false, remain_quota: CHAT_RESERVE });
    const upstream = p.upstreamCalls();
    const answers = await Promise.all(Array.from({ length: 8 }, () => p.chat(t.key)));
    assert.equal(answers.filter((r) => r.status === 200).length, 1, answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join('\n'));
    for (const r of answers.filter((r) => r.status !== 200)) assert.equal(r.json?.error?.code, 'token_quota_exhausted', r.text);
    assert.equal(p.upstreamCalls(), upstream + 1);
    const b = await eventually(() => balanceOf(c), (x) => x.request_count === 1, 'settled');
    assert.deepEqual(b, { quota: 100_000 - CALL_COST, used_quota: CALL_COST, request_count: 1 });
    const after = await tokenOf(c, t.id);
    assert.equal(after.remain_quota, CHAT_RESERVE - CALL_COST);
    assert.equal(after.used_quota, CALL_COST);
  });

  test('8 concurrent calls on a wallet good for one call: one is served, the others get 402, the wallet never goes below zero', async () => {
    const p = product();
    const c = await p.register('thin');
    await p.fund(c, CHAT_RESERVE);
    const t = await createToken(p, c, 'unlimited');
    const upstream = p.upstreamCalls();
    const answers = await Promise.all(Array.from({ length: 8 }, () => p.chat(t.key)));
    assert.equal(answers.filter((r) => r.status === 200).length, 1, answers.map((r) => `${r.status} ${r.text.slice(0, 120)}`).join('\n'));
    for (const r of answers.filter((r) => r.status !== 200)) assert.equal(r.json?.error?.code, 'insufficient_balance', r.text);
    assert.equal(p.upstreamCalls(), upstream + 1);
    const b = await eventually(() => balanceOf(c), (x) => x.request_count === 1, 'settled');
    assert.deepEqual(b, { quota: CHAT_RESERVE - CALL_COST, used_quota: CALL_COST, request_count: 1 });
  });

  test('bad input to the customer and admin routes is refused without a 5xx and creates or moves nothing', async () => {
    const p = product();
    const c = await p.register('fuzzy');
    const before = await balanceOf(c);
    const bodies = [null, [], 'text', { name: 5 }, { name: 'x', remain_quota: 'lots' }, { name: 'x', expired_time: 1e30 }, { name: 'x', remain_quota: -1, unlimited_quota: false }, { name: 'x', allow_ips: 'not an ip' }, { name: 'x', model_limits_enabled: 'yes' }];
    for (const body of bodies) {
      const r = await c.web.request('POST', '/api/token/', body === null ? { raw: 'null', headers: { 'content-type': 'application/json' } } : { body });
      assert.ok(r.status < 500, `${JSON.stringify(body)}: ${r.status} ${r.text}`);
      assert.notEqual(r.json?.success, true, `${JSON.stringify(body)} was accepted: ${r.text}`);
    }
    assert.equal((await c.web.get('/api/token/')).json.data.total, 0, 'no token was created');
    for (const [method, path, body] of [
      ['POST', '/api/user/topup', { key: 12 }],
      ['POST', '/api/user/topup', { key: 'x'.repeat(5000) }],
      ['GET', '/api/token/abc', undefined],
      ['GET', '/api/token/99999999999999999999', undefined],
      ['GET', '/api/log/self?p=-1', undefined],
      ['GET', '/api/log/self?start_timestamp=yesterday', undefined],
      ['POST', '/api/token/batch', { ids: 'all' }],
    ] as const) {
      const r = await c.web.request(method, path, body === undefined ? {} : { body });
      assert.ok(r.status < 500, `${method} ${path}: ${r.status} ${r.text}`);
      assert.notEqual(r.json?.success, true, `${method} ${path}: ${r.text}`);
    }
    for (const body of [{ id: c.id, quota: 'much', reason: 'x' }, { id: c.id, quota: 1.5, reason: 'x' }, { id: 'me', quota: 5 }, { name: 'x', quota: -5, count: 1, expired_time: 0 }]) {
      const path = 'count' in body ? '/api/redemption/' : '/api/user/';
      const r = await p.admin.request('count' in body ? 'POST' : 'PUT', path, { body });
      assert.ok(r.status < 500, `${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
      assert.notEqual(r.json?.success, true, `${path} ${JSON.stringify(body)}: ${r.text}`);
    }
    assert.deepEqual(await balanceOf(c), before);
  });
}
