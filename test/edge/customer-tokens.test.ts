import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';
import { admit, until } from '../helpers/runs.js';
import { insertImportedKey, type EdgeReply, type EdgeServer } from '../helpers/edge.js';
import { customerOwnerName, type CustomerPort, type TokenSettings } from '../../src/contract/customer.js';

const SETTINGS: TokenSettings = { name: 'sdk', expired_time: -1, remain_quota: 100_000, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };
const START = 1_000_000;
const FINAL = ['succeeded', 'failed', 'cancelled'];

function assertRefused(r: EdgeReply, status: number, code: string) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.error.code, code, r.text);
}

eachDatabase('edge: account users\' tokens enforced on every call, charged to the unit on the wallet and the token', (v) => {
  let st: Stack;
  let s: EdgeServer;
  let port: CustomerPort;
  let nextUser = 1;
  const chat = (key: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    s.request('POST', '/v1/chat/completions', { token: key, headers, body: { model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...body } });
  const runOf = (r: EdgeReply) => s.ctx.db.selectFrom('edge_runs').selectAll().where('request_id', '=', r.headers.get('x-request-id')!).executeTakeFirstOrThrow();
  const settled = async (r: EdgeReply) => {
    await until('the call is settled', async () => FINAL.includes((await runOf(r)).status));
    return runOf(r);
  };
  const tokenRow = (id: number) => s.ctx.db.selectFrom('edge_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const wallet = async (userId: number) => {
    const w = await s.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').selectAll('edge_wallets').where('name', '=', customerOwnerName(userId)).executeTakeFirstOrThrow();
    return { balance: Number(w.balance), reserved: Number(w.reserved), used: Number(w.used_quota), requests: Number(w.request_count) };
  };
  /** A new account user with `amount` units and one token of these settings: its id, key and token id. */
  const customer = async (amount: number, settings: Partial<TokenSettings> = {}) => {
    const userId = nextUser++;
    await port.grant(userId, amount, `signup:${userId}`, 'system:test', '');
    const { token, key } = await port.createToken(userId, { ...SETTINGS, ...settings });
    return { userId, key, tokenId: token.id };
  };
  /** Everything a refused call must leave as it was: nothing relayed, nothing held or charged, no run. */
  const snapshot = async (userId: number, tokenId: number) => ({
    upstream: st.up.seen.length,
    wallet: await wallet(userId),
    token: await tokenRow(tokenId),
    runs: (await s.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length,
  });

  before(async () => {
    st = await startStack(v, { edgeEnv: { TRUST_PROXY: 'true' } });
    s = st.edge;
    port = s.services.customers;
    for (const [id, reserve, overdraft] of [['chat', '500', '0'], ['other', '500', '0'], ['over', '100', '1000']] as const) {
      assert.equal((await s.cli('edge', 'model', 'set', id, '--reserve', reserve, '--gateway-model', 'gpt-4o', '--overdraft', overdraft)).error, null);
    }
  });
  after(() => st.close());

  test('each call costs the wallet and the limited token exactly its cost; both used_quotas, request_count and the run record it', async () => {
    const c = await customer(START);
    const whole = await chat(c.key);
    const streamed = await chat(c.key, { stream: true, stream_options: { include_usage: true } });
    assert.deepEqual([whole.status, streamed.status], [200, 200]);
    const runs = [await settled(whole), await settled(streamed)];
    const admitted = await admit(s, c.key, 'chat');
    await s.worker!.tick();
    await s.worker!.drain();
    runs.push(await s.ctx.db.selectFrom('edge_runs').selectAll().where('run_id', '=', admitted.runId).executeTakeFirstOrThrow());
    assert.deepEqual(runs.map((r) => [r.status, Number(r.cost), Number(r.token_id), r.token_name, Number(r.stream)]), [
      ['succeeded', CHAT_COST, c.tokenId, 'sdk', 0],
      ['succeeded', CHAT_COST, c.tokenId, 'sdk', 1],
      ['succeeded', CHAT_COST, c.tokenId, 'sdk', 0],
    ]);
    assert.deepEqual(await wallet(c.userId), { balance: START - 3 * CHAT_COST, reserved: 0, used: 3 * CHAT_COST, requests: 3 });
    const t = await port.token(c.userId, c.tokenId);
    assert.deepEqual([t.remain_quota, t.used_quota, t.status], [100_000 - 3 * CHAT_COST, 3 * CHAT_COST, 1]);
    assert.ok(Math.abs(t.accessed_time - Date.now() / 1000) < 30);
    assert.deepEqual(await port.balance(c.userId), { quota: START - 3 * CHAT_COST, used_quota: 3 * CHAT_COST, request_count: 3 });
  });

  test('an unlimited token is not checked but counts down as new-api\'s does; a CLI key behaves as before and still counts on the wallet', async () => {
    const c = await customer(START, { unlimited_quota: true, remain_quota: 0 });
    assert.equal((await chat(c.key)).status, 200);
    await until('settled', async () => Number((await tokenRow(c.tokenId)).used_quota) === CHAT_COST);
    assert.equal(Number((await tokenRow(c.tokenId)).remain_quota), -CHAT_COST);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'machine', '--amount', String(START))).error, null);
    const cli = await s.issueKey('machine');
    const r = await chat(cli);
    assert.equal(r.status, 200);
    const run = await settled(r);
    assert.deepEqual([Number(run.token_id), run.token_name, Number(run.cost)], [0, '', CHAT_COST]);
    const w = await s.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').selectAll('edge_wallets').where('name', '=', 'machine').executeTakeFirstOrThrow();
    assert.deepEqual([Number(w.balance), Number(w.used_quota), Number(w.request_count)], [START - CHAT_COST, CHAT_COST, 1]);
  });

  test('refused before anything is relayed or held: disabled 401, expired 401, address 403, model 403, token limit 403, empty wallet 402', async () => {
    const past = Math.floor(Date.now() / 1000) - 10;
    const cases: [string, Partial<TokenSettings>, number, string, ((key: string) => Promise<EdgeReply>)?][] = [
      ['expired', { expired_time: past }, 401, 'token_expired'],
      ['ip', { allow_ips: '10.0.0.0/8\n2001:db8::/32' }, 403, 'ip_not_allowed'],
      ['ip v6', { allow_ips: '2001:db8::/32' }, 403, 'ip_not_allowed', (key) => chat(key, {}, { 'x-forwarded-for': '2001:db9::1' })],
      ['model', { model_limits_enabled: true, model_limits: 'other' }, 403, 'model_not_allowed'],
      ['unknown model', { model_limits_enabled: true, model_limits: 'other' }, 403, 'model_not_allowed', (key) => chat(key, { model: 'no-such-model' })],
      ['no model at all', { model_limits_enabled: true, model_limits: '' }, 403, 'model_not_allowed', (key) => chat(key, { model: 'other' })],
      ['admission', { model_limits_enabled: true, model_limits: 'other' }, 403, 'model_not_allowed', (key) => s.respond(key, { publicModelId: 'chat', input: 'hi' }, { 'idempotency-key': crypto.randomUUID() })],
      ['limit', { remain_quota: 10 }, 403, 'token_quota_exhausted'],
      ['limit, responses', { remain_quota: 499 }, 403, 'token_quota_exhausted', (key) => s.respond(key, { model: 'chat', input: 'hi' })],
    ];
    for (const [what, settings, status, code, call] of cases) {
      const c = await customer(START, settings);
      const before = await snapshot(c.userId, c.tokenId);
      assertRefused(await (call ?? chat)(c.key), status, code);
      assert.deepEqual(await snapshot(c.userId, c.tokenId), before, what);
    }
    const disabled = await customer(START);
    await port.setTokenStatus(disabled.userId, disabled.tokenId, 2);
    const before = await snapshot(disabled.userId, disabled.tokenId);
    assertRefused(await chat(disabled.key), 401, 'token_disabled');
    assertRefused(await s.request('GET', '/v1/models', { token: disabled.key }), 401, 'token_disabled');
    assert.deepEqual(await snapshot(disabled.userId, disabled.tokenId), before);
    const poor = await customer(0);
    const poorBefore = await snapshot(poor.userId, poor.tokenId);
    assertRefused(await chat(poor.key), 402, 'insufficient_balance');
    assert.deepEqual(await snapshot(poor.userId, poor.tokenId), poorBefore);
    // The limit's answer says what is left and what the call needed.
    const low = await customer(START, { remain_quota: 10 });
    assert.match((await chat(low.key)).json.error.message, /10 left.*needs 500/);
  });

  test('allowed addresses (IPv4, IPv6, CIDR) and models pass; re-enabled and extended tokens work again', async () => {
    const v4 = await customer(START, { allow_ips: '10.0.0.0/8, 127.0.0.1' });
    assert.equal((await chat(v4.key)).status, 200);
    const v6 = await customer(START, { allow_ips: '2001:db8::/32' });
    assert.equal((await chat(v6.key, {}, { 'x-forwarded-for': '2001:db8::7' })).status, 200);
    const models = await customer(START, { model_limits_enabled: true, model_limits: 'other, over' });
    assert.equal((await chat(models.key, { model: 'other' })).status, 200);
    assert.deepEqual((await s.request('GET', '/v1/models', { token: models.key })).json.data.map((m: { id: string }) => m.id).sort(), ['other', 'over']);
    assert.deepEqual((await s.request('GET', '/v1/models', { token: v4.key })).json.data.map((m: { id: string }) => m.id).sort(), ['chat', 'other', 'over']);
    const c = await customer(START);
    await port.setTokenStatus(c.userId, c.tokenId, 2);
    assertRefused(await chat(c.key), 401, 'token_disabled');
    await port.setTokenStatus(c.userId, c.tokenId, 1);
    assert.equal((await chat(c.key)).status, 200);
    await port.updateToken(c.userId, c.tokenId, { ...SETTINGS, expired_time: Math.floor(Date.now() / 1000) - 5 });
    assertRefused(await chat(c.key), 401, 'token_expired');
    await port.updateToken(c.userId, c.tokenId, { ...SETTINGS, expired_time: Math.floor(Date.now() / 1000) + 3600 });
    assert.equal((await chat(c.key)).status, 200);
  });

  test('a limited token is never charged past what it has: a call costing more than its hold takes only the rest of the token', async () => {
    const c = await customer(START, { remain_quota: 150 });
    const r = await chat(c.key, { model: 'over' });
    assert.equal(r.status, 200, r.text);
    const run = await settled(r);
    assert.equal(Number(run.cost), 150);
    assert.deepEqual([Number((await tokenRow(c.tokenId)).remain_quota), Number((await tokenRow(c.tokenId)).used_quota)], [0, 150]);
    assert.deepEqual(await wallet(c.userId), { balance: START - 150, reserved: 0, used: 150, requests: 1 });
    assert.equal((await port.token(c.userId, c.tokenId)).status, 4);
    assertRefused(await chat(c.key, { model: 'over' }), 403, 'token_quota_exhausted');
  });

  test('concurrent calls against a token limit never spend past it; every refused call was neither relayed nor charged', async () => {
    const LIMIT = 2000;
    const c = await customer(START, { remain_quota: LIMIT });
    const upstreamBefore = st.up.to('/v1/chat/completions').length;
    const replies = await Promise.all(Array.from({ length: 12 }, () => chat(c.key)));
    const ok = replies.filter((r) => r.status === 200);
    for (const r of replies.filter((x) => x.status !== 200)) assertRefused(r, 403, 'token_quota_exhausted');
    assert.ok(ok.length >= 1, 'some calls went through');
    const runs = await Promise.all(ok.map(settled));
    const charged = runs.reduce((n, r) => n + Number(r.cost), 0);
    assert.equal(st.up.to('/v1/chat/completions').length - upstreamBefore, ok.length);
    // Each call relayed was charged its whole cost: what went upstream is what the token paid, within its limit.
    assert.ok(runs.every((r) => Number(r.cost) === CHAT_COST));
    assert.ok(charged <= LIMIT, `charged ${charged} past the limit ${LIMIT}`);
    const t = await tokenRow(c.tokenId);
    assert.deepEqual([Number(t.remain_quota), Number(t.used_quota)], [LIMIT - charged, charged]);
    assert.deepEqual(await wallet(c.userId), { balance: START - charged, reserved: 0, used: charged, requests: ok.length });
    assert.equal((await s.ctx.db.selectFrom('edge_runs').select('run_id').where('token_id', '=', c.tokenId).execute()).length, ok.length);
  });

  test('an imported new-api key (sk-…) works unchanged and is charged; unknown sk- keys and customer sessions are refused', async () => {
    const userId = nextUser++;
    await port.grant(userId, START, `import:user:${userId}`, 'system:import', '');
    const ownerId = Number((await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', customerOwnerName(userId)).executeTakeFirstOrThrow()).id);
    const { key } = await insertImportedKey(s.ctx.db, ownerId, { name: 'old', remain_quota: 5000, unlimited_quota: 0 });
    const r = await chat(key);
    assert.equal(r.status, 200, r.text);
    const run = await settled(r);
    assert.deepEqual([Number(run.cost), run.token_name], [CHAT_COST, 'old']);
    assert.deepEqual(await port.balance(userId), { quota: START - CHAT_COST, used_quota: CHAT_COST, request_count: 1 });
    const other = `sk-${'A'.repeat(48)}`;
    assertRefused(await chat(other), 401, 'invalid_api_key');
    assertRefused(await chat(key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a')), 401, 'invalid_api_key');
    assertRefused(await chat('sk-short'), 401, 'customer_session_not_accepted');
    assertRefused(await chat('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig'), 401, 'customer_session_not_accepted');
    assertRefused(await chat(key, {}, { cookie: 'session=abc' }), 401, 'customer_session_not_accepted');
    assert.ok(!s.everything().includes(key), 'an imported key appears in a response or the log');
  });
});
