import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { CustomerRefusal, type CustomerLog } from '../../src/contract/customer.js';
import { ledgerPart } from '../../src/edge/customers/ledger/index.js';
import { ensureCustomerOwner } from '../../src/edge/customers/owners.js';
import { relayFor } from '../../src/edge/relay/port.js';
import { httpRelay } from '../../src/edge/relay/http-client.js';
import { insertRun } from '../../src/edge/runs/store.js';
import { insertCredit } from '../../src/edge/wallets/store.js';
import { eachDatabase } from '../helpers/services.js';
import { CHAT_COST, RATIOS, startStack, type Stack } from '../helpers/stack.js';
import { relay, RELAY_SECRET } from '../helpers/relay.js';
import { runRow, until } from '../helpers/runs.js';

const HOUR = 3600;
/** A whole hour two days ago (seconds): the fixture's runs and credits are placed after it. */
const T0 = Math.floor((Date.now() / 1000 - 2 * 86400) / HOUR) * HOUR;

interface RunSpec {
  owner: number;
  model: string;
  token: string;
  status: 'succeeded' | 'failed' | 'running';
  cost: number;
  prompt?: number;
  completion?: number;
  /** Milliseconds. */
  started: number;
  finished: number | null;
  stream?: boolean;
  error?: string;
}

async function addRun(st: Stack, r: RunSpec) {
  const runId = crypto.randomUUID();
  await insertRun(st.edge.ctx.db, {
    run_id: runId,
    request_id: `req-${runId.slice(0, 8)}`,
    owner_id: r.owner,
    key_id: 'k',
    public_model_id: r.model,
    input: '',
    api_version: 'v1',
    reserved_amount: 1000,
    status: r.status,
    revision: 1,
    traceparent: null,
    created_at: r.started - 100,
    kind: 'sync',
    format: 'chat',
    deadline_at: r.started + 600_000,
    started_at: r.started,
    finished_at: r.finished,
    cost: r.cost,
    prompt_tokens: r.prompt ?? 0,
    completion_tokens: r.completion ?? 0,
    token_id: r.token ? 11 : 0,
    token_name: r.token,
    stream: r.stream ? 1 : 0,
    error_message: r.error ?? null,
  });
  return runId;
}

async function refusal(p: Promise<unknown>, reason: CustomerRefusal['reason']) {
  await assert.rejects(p, (e: unknown) => e instanceof CustomerRefusal && e.reason === reason);
}

eachDatabase('customer ledger: usage log, statistics, hourly usage and prices (edge side of the customer port)', (v) => {
  let st: Stack;
  let ledger: ReturnType<typeof ledgerPart>;
  const ids: Record<string, string> = {};
  const now = Date.now();

  before(async () => {
    st = await startStack(v);
    const s = st.edge;
    ledger = ledgerPart(s.ctx, s.services.relay);
    await st.gateway.services.ratios.setCurrent({ ...RATIOS, model_price: { 'text-embedding-3-small': 0.01 }, group_ratio: { default: 1, vip: 0.5 } });
    const ok = async (...args: string[]) => assert.equal((await s.cli(...args)).error, null, args.join(' '));
    await ok('edge', 'model', 'set', 'chat', '--reserve', '1000', '--gateway-model', 'gpt-4o');
    await ok('edge', 'model', 'set', 'embed', '--reserve', '1000', '--gateway-model', 'text-embedding-3-small', '--group', 'vip');
    await ok('edge', 'model', 'set', 'gpt-4o', '--reserve', '1000', '--group', 'premium');
    await ok('edge', 'model', 'set', 'free', '--reserve', '0', '--gateway-model', 'no-price-model');
    await ok('edge', 'model', 'set', 'hidden', '--reserve', '10', '--gateway-model', 'gpt-4o', '--disabled');

    const db = s.ctx.db;
    const u7 = await db.transaction().execute((trx) => ensureCustomerOwner(trx, 7));
    const u8 = await db.transaction().execute((trx) => ensureCustomerOwner(trx, 8));
    const ms = (sec: number) => (T0 + sec) * 1000;
    ids.r1 = await addRun(st, { owner: u7, model: 'chat', token: 'tok-a', status: 'succeeded', cost: 320, prompt: 100, completion: 20, started: ms(10), finished: ms(12) + 700, stream: true });
    ids.r2 = await addRun(st, { owner: u7, model: 'chat-mini', token: 'tok-b', status: 'succeeded', cost: 50, prompt: 30, completion: 5, started: ms(3605) - 400, finished: ms(3605) });
    ids.r3 = await addRun(st, { owner: u7, model: 'chat', token: 'tok-a', status: 'failed', cost: 0, started: ms(7195), finished: ms(7201), error: 'upstream down' });
    ids.r4 = await addRun(st, { owner: u7, model: 'chat-mini', token: 'tok-b', status: 'failed', cost: 30, prompt: 7, completion: 3, started: ms(7200), finished: ms(7202) });
    ids.r5 = await addRun(st, { owner: u7, model: 'chat', token: 'tok-a', status: 'running', cost: 0, started: now - 1000, finished: null });
    ids.r6 = await addRun(st, { owner: u7, model: 'chat', token: 'tok-a', status: 'succeeded', cost: 40, prompt: 10, completion: 5, started: now - 9000, finished: now - 5000 });
    ids.r7 = await addRun(st, { owner: u8, model: 'chat', token: 'mine', status: 'succeeded', cost: 99, prompt: 9, completion: 9, started: ms(19), finished: ms(20) });
    const credit = async (id: string, kind: string, amount: number, reason: string, at: number) => {
      await insertCredit(db, { credit_id: id, owner_id: u7, amount, wallet: '{}', kind, reason });
      await db.updateTable('edge_credits').set({ created_at: at }).where('credit_id', '=', id).execute();
    };
    await credit('signup:7', 'signup', 1000, '', T0 + 30);
    await credit('adjust:x', 'adjust', -100, 'refund fix', T0 + 3700);
    await credit('import:user:70', 'import', 5000, 'balance imported from new-api', T0 + 5);
    await credit('redemption:42', 'topup', 2000, '通过兑换码充值 ＄0.004000 额度，兑换码ID 42', T0 + 9000);
    // A CLI owner's real call through the gateway relay: user 0 in the admin's log.
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100000')).error, null);
    const key = await s.issueKey('acme');
    const r = await s.request('POST', '/v1/chat/completions', { token: key, body: { model: 'chat', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(r.status, 200, r.text);
    const run = await db.selectFrom('edge_runs').select('run_id').where('request_id', '=', r.headers.get('x-request-id')!).executeTakeFirstOrThrow();
    await until('the call is settled', async () => (await runRow(s, run.run_id)).finished_at !== null);
    ids.acme = run.run_id;
  });
  after(() => st.close());

  const runIds = (items: CustomerLog[]) => items.map((l) => l.id);
  const all = (q: Record<string, unknown> = {}) => ledger.logs({ userId: 7, page: 1, size: 100, ...q });
  const EVERY = () => [`run:${ids.r6}`, 'credit:redemption:42', `run:${ids.r4}`, `run:${ids.r3}`, 'credit:adjust:x', `run:${ids.r2}`, 'credit:signup:7', `run:${ids.r1}`, 'credit:import:user:70'];

  test("a user's log: ended runs and credits as one list, newest first, with new-api's fields", async () => {
    const page = await all();
    assert.equal(page.total, 9);
    assert.deepEqual(runIds(page.items), EVERY());
    const byId = new Map(page.items.map((l) => [l.id, l]));
    assert.deepEqual(byId.get(`run:${ids.r1}`), {
      id: `run:${ids.r1}`,
      user_id: 7,
      created_at: T0 + 12,
      type: 2,
      content: '',
      token_name: 'tok-a',
      model_name: 'chat',
      quota: 320,
      prompt_tokens: 100,
      completion_tokens: 20,
      use_time: 2,
      is_stream: true,
      token_id: 11,
      request_id: `req-${ids.r1!.slice(0, 8)}`,
    });
    const failed = byId.get(`run:${ids.r3}`)!;
    assert.deepEqual([failed.type, failed.quota, failed.content, failed.use_time, failed.is_stream], [5, 0, 'upstream down', 6, false]);
    assert.equal(byId.get(`run:${ids.r4}`)!.type, 2, 'a failed call that cost something is a consume row');
    const topup = byId.get('credit:redemption:42')!;
    assert.deepEqual([topup.type, topup.quota, topup.content, topup.created_at, topup.model_name, topup.token_name], [1, 2000, '通过兑换码充值 ＄0.004000 额度，兑换码ID 42', T0 + 9000, '', '']);
    assert.deepEqual([byId.get('credit:adjust:x')!.type, byId.get('credit:adjust:x')!.quota, byId.get('credit:adjust:x')!.content], [3, -100, '管理员调整额度 -＄0.000200 额度：refund fix']);
    assert.deepEqual([byId.get('credit:signup:7')!.type, byId.get('credit:signup:7')!.content], [4, '新用户注册赠送 ＄0.002000 额度']);
    assert.equal(byId.get('credit:import:user:70')!.type, 4);
    assert.ok(!page.items.some((l) => l.id === `run:${ids.r5}`), 'a running call is not in the log');
    assert.ok(page.items.every((l) => l.user_id === 7));
  });

  test('type, token, model and time filters; pages of the same list', async () => {
    const only = async (q: Record<string, unknown>) => {
      const page = await all(q);
      assert.equal(page.total, page.items.length, JSON.stringify(q));
      return runIds(page.items);
    };
    assert.deepEqual(await only({ type: 1 }), ['credit:redemption:42']);
    assert.deepEqual(await only({ type: 2 }), [`run:${ids.r6}`, `run:${ids.r4}`, `run:${ids.r2}`, `run:${ids.r1}`]);
    assert.deepEqual(await only({ type: 3 }), ['credit:adjust:x']);
    assert.deepEqual(await only({ type: 4 }), ['credit:signup:7', 'credit:import:user:70']);
    assert.deepEqual(await only({ type: 5 }), [`run:${ids.r3}`]);
    assert.deepEqual(await only({ type: 9 }), []);
    assert.deepEqual(await only({ token_name: 'tok-a' }), [`run:${ids.r6}`, `run:${ids.r3}`, `run:${ids.r1}`]);
    assert.deepEqual(await only({ token_name: 'tok-a', type: 2 }), [`run:${ids.r6}`, `run:${ids.r1}`]);
    assert.deepEqual(await only({ model_name: 'chat' }), [`run:${ids.r6}`, `run:${ids.r3}`, `run:${ids.r1}`]);
    assert.deepEqual(await only({ model_name: 'chat%' }), [`run:${ids.r6}`, `run:${ids.r4}`, `run:${ids.r3}`, `run:${ids.r2}`, `run:${ids.r1}`]);
    assert.deepEqual(await only({ model_name: '%mini' }), [`run:${ids.r4}`, `run:${ids.r2}`]);
    assert.deepEqual(await only({ model_name: 'c_at%' }), [], '_ is literal');
    assert.deepEqual(await only({ model_name: 'c_at' }), []);
    assert.deepEqual(await only({ start_timestamp: T0 + 3600, end_timestamp: T0 + 7201 }), [`run:${ids.r3}`, 'credit:adjust:x', `run:${ids.r2}`]);
    assert.deepEqual(await only({ start_timestamp: T0 + 7202 }), [`run:${ids.r6}`, 'credit:redemption:42', `run:${ids.r4}`]);
    for (const bad of ['%', 'a%b%c%d', 'ch%%']) await refusal(all({ model_name: bad }), 'invalid');
    await refusal(all({ start_timestamp: -1 }), 'invalid');

    const pages = await Promise.all([1, 2, 3].map((p) => ledger.logs({ userId: 7, page: p, size: 4 })));
    assert.deepEqual(pages.map((p) => p.total), [9, 9, 9]);
    assert.deepEqual(pages.flatMap((p) => runIds(p.items)), EVERY());
    assert.deepEqual((await ledger.logs({ userId: 7, page: 4, size: 4 })).items, []);
    assert.deepEqual(await ledger.logs({ userId: 99, page: 1, size: 10 }), { items: [], total: 0 }, 'a user the edge has never seen');
    await refusal(ledger.logs({ userId: 0, page: 1, size: 10 }), 'invalid');
  });

  test("the admin's log: every owner, account users by id and CLI owners as user 0", async () => {
    const page = await ledger.logs({ page: 1, size: 100, type: 2, model_name: 'chat' });
    assert.deepEqual(runIds(page.items), [`run:${ids.acme}`, `run:${ids.r6}`, `run:${ids.r7}`, `run:${ids.r1}`]);
    assert.deepEqual(page.items.map((l) => l.user_id), [0, 7, 8, 7]);
    const acme = page.items[0]!;
    assert.deepEqual([acme.quota, acme.prompt_tokens, acme.completion_tokens, acme.token_name, acme.is_stream], [CHAT_COST, 100, 20, '', false]);
    const everything = await ledger.logs({ page: 1, size: 100 });
    // User 7's nine rows, user 8's call and acme's (a CLI credit without an idempotency key keeps no credit row).
    assert.deepEqual([everything.total, everything.items.length], [11, 11]);
    assert.deepEqual(runIds(everything.items.filter((l) => l.user_id === 7)), EVERY());
  });

  test("statistics: units of the filtered consume rows, calls and tokens of the last minute (new-api's semantics)", async () => {
    assert.deepEqual(await ledger.logStat({ userId: 7 }), { quota: 320 + 50 + 30 + 40, rpm: 1, tpm: 15 });
    assert.deepEqual(await ledger.logStat({ userId: 7, token_name: 'tok-a' }), { quota: 360, rpm: 1, tpm: 15 });
    assert.deepEqual(await ledger.logStat({ userId: 7, token_name: 'tok-b' }), { quota: 80, rpm: 0, tpm: 0 });
    assert.deepEqual(await ledger.logStat({ userId: 7, start_timestamp: T0, end_timestamp: T0 + 3700 }), { quota: 370, rpm: 1, tpm: 15 });
    assert.deepEqual(await ledger.logStat({ userId: 7, model_name: '%mini' }), { quota: 80, rpm: 0, tpm: 0 });
    assert.deepEqual(await ledger.logStat({ userId: 99 }), { quota: 0, rpm: 0, tpm: 0 });
    const admin = await ledger.logStat({ model_name: 'chat' });
    assert.deepEqual(admin, { quota: 320 + 40 + 99 + CHAT_COST, rpm: 2, tpm: 15 + 120 });
  });

  test('hourly usage by model: consume rows only, between the timestamps', async () => {
    const end = Math.floor(now / 1000) + 60;
    const mine = await ledger.usage({ userId: 7, start_timestamp: T0, end_timestamp: end });
    const hourOfNow = Math.floor((now - 5000) / 3600_000) * 3600;
    assert.deepEqual(mine, [
      { user_id: 7, model_name: 'chat', created_at: T0, count: 1, quota: 320, token_used: 120 },
      { user_id: 7, model_name: 'chat-mini', created_at: T0 + HOUR, count: 1, quota: 50, token_used: 35 },
      { user_id: 7, model_name: 'chat-mini', created_at: T0 + 2 * HOUR, count: 1, quota: 30, token_used: 10 },
      { user_id: 7, model_name: 'chat', created_at: hourOfNow, count: 1, quota: 40, token_used: 15 },
    ]);
    assert.deepEqual(await ledger.usage({ userId: 7, start_timestamp: T0 + HOUR, end_timestamp: T0 + 2 * HOUR - 1 }), [mine[1]]);
    const admin = await ledger.usage({ start_timestamp: T0, end_timestamp: T0 + HOUR - 1 });
    assert.deepEqual(admin, [{ user_id: 0, model_name: 'chat', created_at: T0, count: 2, quota: 320 + 99, token_used: 120 + 18 }]);
    assert.deepEqual(await ledger.usage({ userId: 99, start_timestamp: T0, end_timestamp: end }), []);
    await refusal(ledger.usage({ userId: 7, start_timestamp: T0 + 10, end_timestamp: T0 }), 'invalid');
  });

  test("through the edge's customer port: a token's calls, a redeemed code, a starting balance and an admin's edit in the user's log", async () => {
    const port = st.edge.services.customers;
    await port.grant(50, 100_000, 'signup:50', 'system:test', '');
    const { key } = await port.createToken(50, { name: 'sdk', expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' });
    const chat = (body: Record<string, unknown>) => st.edge.request('POST', '/v1/chat/completions', { token: key, body: { model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...body } });
    const calls = [await chat({}), await chat({ stream: true, stream_options: { include_usage: true } })];
    for (const r of calls) assert.equal(r.status, 200, r.text);
    for (const r of calls) {
      await until('the call is settled', async () => {
        const run = await st.edge.ctx.db.selectFrom('edge_runs').select('finished_at').where('request_id', '=', r.headers.get('x-request-id')!).executeTakeFirstOrThrow();
        return run.finished_at !== null;
      });
    }
    const [code] = await port.createCodes({ name: 'e2e', quota: 5000, count: 1, expired_time: 0 }, 'account:1');
    assert.equal(await port.redeem(50, code!), 5000);
    const balance = await port.balance(50);
    await port.setQuota(50, balance.quota + 10, 'account:1', 'goodwill');

    const log = await port.logs({ userId: 50, page: 1, size: 10 });
    assert.equal(log.total, 5);
    // Credits keep whole seconds, calls milliseconds: within one second their order is not the test's.
    const byType = (rows: number[][]) => rows.sort((a, b) => a[0]! - b[0]!);
    assert.deepEqual(byType(log.items.map((l) => [l.type, l.quota])), [[1, 5000], [2, CHAT_COST], [2, CHAT_COST], [3, 10], [4, 100_000]]);
    const consume = log.items.filter((l) => l.type === 2);
    assert.deepEqual(consume.map((l) => [l.model_name, l.token_name, l.prompt_tokens, l.completion_tokens, l.user_id]), [['chat', 'sdk', 100, 20, 50], ['chat', 'sdk', 100, 20, 50]]);
    assert.deepEqual(consume.map((l) => l.is_stream).sort(), [false, true]);
    assert.ok(consume.every((l) => l.token_id > 0 && l.request_id.length > 0));
    assert.match(log.items.find((l) => l.type === 3)!.content, /goodwill$/);
    assert.equal(log.items.find((l) => l.type === 4)!.content, '新用户注册赠送 ＄0.200000 额度');
    assert.deepEqual(await port.logStat({ userId: 50 }), { quota: 2 * CHAT_COST, rpm: 2, tpm: 240 });
    assert.deepEqual((await port.topups(50, { page: 1, size: 10 })).items.map((t) => [t.payment_method, t.amount]), [['redemption', 5000]]);
    assert.equal((await port.balance(50)).quota, balance.quota + 10);
  });

  const EXPECTED_PRICING = {
    models: [
      { model_name: 'chat', quota_type: 0, model_ratio: 2, model_price: 0, completion_ratio: 3, enable_groups: ['default'] },
      { model_name: 'embed', quota_type: 1, model_ratio: 0, model_price: 0.01, completion_ratio: 0, enable_groups: ['vip'] },
      { model_name: 'free', quota_type: 0, model_ratio: 0, model_price: 0, completion_ratio: 1, enable_groups: ['default'] },
      { model_name: 'gpt-4o', quota_type: 0, model_ratio: 2, model_price: 0, completion_ratio: 3, enable_groups: ['premium'] },
    ],
    group_ratio: { default: 1, vip: 0.5, premium: 1 },
  };

  test("prices: the edge's enabled public models at the gateway's ratios, through the in-process relay", async () => {
    assert.deepEqual(await ledger.pricing(), EXPECTED_PRICING);
    assert.deepEqual(await ledger.models(7, ''), ['chat', 'embed', 'free', 'gpt-4o']);
    assert.deepEqual(await ledger.models(7, 'default'), ['chat', 'free'], 'one channel group\'s models');
    assert.deepEqual(await ledger.models(7, 'vip'), ['embed']);
    assert.deepEqual(await ledger.models(7, 'nobody'), []);
    await refusal(ledger.models(-1, ''), 'invalid');
  });

  test('prices over HTTP (GR08 with a workload token); refused without one; no relay: unavailable', async () => {
    const overHttp = ledgerPart(st.edge.ctx, httpRelay({ url: st.gateway.url, tokenKey: RELAY_SECRET, timeoutMs: 5000 }));
    assert.deepEqual(await overHttp.pricing(), EXPECTED_PRICING);
    const direct = await relay(st.gateway.url, '/prices', { models: ['gpt-4o', 'nothing', '__proto__'] });
    assert.equal(direct.status, 200, direct.text);
    assert.deepEqual(direct.json, {
      models: { 'gpt-4o': { quota_type: 0, model_ratio: 2, model_price: 0, completion_ratio: 3 }, nothing: null, ['__proto__']: null },
      group_ratio: { default: 1, vip: 0.5 },
    });
    assert.equal((await relay(st.gateway.url, '/prices', { models: ['gpt-4o'] }, { token: null })).status, 401);
    assert.equal((await relay(st.gateway.url, '/prices', { models: 'gpt-4o' })).status, 400);
    // A price change reaches the list at once (the relay drops its cached prices).
    await st.gateway.services.ratios.setCurrent({ ...RATIOS, model_ratio: { ...RATIOS.model_ratio, 'gpt-4o': 4 }, group_ratio: { default: 1, vip: 0.5 } });
    assert.equal((await overHttp.pricing()).models[0]!.model_ratio, 4);
    await st.gateway.services.ratios.setCurrent({ ...RATIOS, model_price: { 'text-embedding-3-small': 0.01 }, group_ratio: { default: 1, vip: 0.5 } });
    const none = ledgerPart(st.edge.ctx, relayFor(st.edge.ctx.config, null).relay);
    await refusal(none.pricing(), 'unavailable');
    assert.deepEqual(await none.models(7, ''), ['chat', 'embed', 'free', 'gpt-4o'], 'the model list needs no gateway');
  });

  test('no enabled public model: empty prices without asking the gateway', async () => {
    const none = ledgerPart(st.edge.ctx, relayFor(st.edge.ctx.config, null).relay);
    await st.edge.ctx.db.updateTable('edge_models').set({ enabled: 0 }).execute();
    try {
      assert.deepEqual(await none.pricing(), { models: [], group_ratio: {} });
      assert.deepEqual(await none.models(7, ''), []);
    } finally {
      await st.edge.ctx.db.updateTable('edge_models').set({ enabled: 1 }).where('public_model_id', '!=', 'hidden').execute();
    }
  });
});
