import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from '../../helpers/http.js';
import { CHAT_COST, CHAT_USAGE } from '../../helpers/stack.js';
import { chat, eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

const TOKEN = { expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };

// Usage (AP10–AP13, AS14–AS16) and prices (AP29–AP42) with the edge co-hosted: the log rows of real calls
// through a fake upstream, their statistics and hourly buckets, own rows only, the admin's view of all.
eachPlacement('customer API: usage and prices', (v, apart) => {
  let c: CustomerStack;
  let alice: { b: Browser; id: number };
  let mallory: { b: Browser; id: number };
  const since = Math.floor(Date.now() / 1000) - 5;

  before(async () => {
    c = await startCustomerStack(v, { apart });
    alice = await c.customer('alice');
    mallory = await c.customer('mallory');
    for (const u of [alice, mallory]) assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: u.id, quota: 100_000, reason: 'test credit' } })).json.success, true);
    const keyOf = async (b: Browser, name: string) => (await b.post('/api/token/', { ...TOKEN, name })).json.data.key as string;
    const [sdk, cli, other] = [await keyOf(alice.b, 'sdk'), await keyOf(alice.b, 'cli'), await keyOf(mallory.b, 'mine')];
    for (const key of [sdk, sdk, cli, other]) assert.equal((await chat(c.st, key)).status, 200);
  });
  after(() => c.close());

  test('GET /api/log/self lists the caller\'s consume rows newest first with new-api\'s fields, and the quota edit as type 3', async () => {
    const r = await alice.b.get('/api/log/self?type=2&p=1&page_size=10');
    assert.equal(r.json.success, true, r.text);
    const d = r.json.data;
    assert.deepEqual([d.page, d.page_size, d.total], [1, 10, 3]);
    const row = d.items[0];
    assert.deepEqual(
      [row.user_id, row.username, row.type, row.model_name, row.token_name, row.quota, row.prompt_tokens, row.completion_tokens, row.is_stream],
      [alice.id, 'alice', 2, 'gpt-4o', 'cli', CHAT_COST, CHAT_USAGE.prompt_tokens, CHAT_USAGE.completion_tokens, false],
    );
    assert.ok(row.created_at >= since);
    assert.ok(d.items.every((x: any) => x.user_id === alice.id));
    const times = d.items.map((x: any) => x.created_at);
    assert.deepEqual(times, [...times].sort((a: number, b: number) => b - a));
    const manage = (await alice.b.get('/api/log/self?type=3')).json.data.items;
    assert.equal(manage.length, 1);
    const all = (await alice.b.get('/api/log/self?page_size=100')).json.data;
    assert.equal(all.total, 4);
    // The reference's search path is the same log.
    assert.deepEqual((await alice.b.get('/api/log/self/search?type=2')).json.data, (await alice.b.get('/api/log/self?type=2')).json.data);
  });

  test('filters: token_name, model_name, time range; paging', async () => {
    const names = async (q: string) => (await alice.b.get(`/api/log/self?type=2&${q}`)).json.data.items.map((x: any) => x.token_name);
    assert.deepEqual(await names('token_name=sdk'), ['sdk', 'sdk']);
    assert.deepEqual(await names('model_name=other-model'), []);
    assert.deepEqual(await names(`start_timestamp=${since + 3600}`), []);
    assert.deepEqual(await names(`start_timestamp=${since}&end_timestamp=${since + 3600}`), ['cli', 'sdk', 'sdk']);
    const second = (await alice.b.get('/api/log/self?type=2&p=2&page_size=2')).json.data;
    assert.deepEqual([second.total, second.items.length], [3, 1]);
    const reversed = await alice.b.get(`/api/log/self?start_timestamp=${since + 10}&end_timestamp=${since}`);
    assert.deepEqual([reversed.status, reversed.json.code], [200, 'CUSTOMER_INVALID']);
    for (const q of ['p=0', 'page_size=101', 'type=x', 'start_timestamp=-1']) assert.equal((await alice.b.get(`/api/log/self?${q}`)).json.code, 'INVALID_PARAMETERS', q);
  });

  test('stat and the hourly chart count the caller\'s own calls', async () => {
    const stat = (await alice.b.get('/api/log/self/stat?type=2')).json.data;
    assert.equal(stat.quota, 3 * CHAT_COST);
    assert.ok(stat.rpm >= 3 && stat.tpm >= 3 * CHAT_USAGE.total_tokens, JSON.stringify(stat));
    const buckets = (await alice.b.get(`/api/data/self?start_timestamp=${since - 3600}&end_timestamp=${since + 3600}`)).json.data;
    assert.deepEqual(
      buckets.map((x: any) => [x.user_id, x.username, x.model_name, x.count, x.quota, x.token_used]),
      [[alice.id, 'alice', 'gpt-4o', 3, 3 * CHAT_COST, 3 * CHAT_USAGE.total_tokens]],
    );
    assert.deepEqual((await alice.b.get('/api/data/self')).json.data.length, 1, 'absent bounds: the last 30 days');
    const wide = await alice.b.get(`/api/data/self?start_timestamp=${since - 40 * 86400}&end_timestamp=${since}`);
    assert.deepEqual([wide.status, wide.json.code], [200, 'CUSTOMER_INVALID']);
    const other = (await mallory.b.get('/api/log/self/stat?type=2')).json.data;
    assert.equal(other.quota, CHAT_COST);
  });

  test('another user sees only their own rows; admins see every user\'s, by username', async () => {
    const m = (await mallory.b.get('/api/log/self?type=2')).json.data;
    assert.deepEqual(m.items.map((x: any) => [x.username, x.token_name]), [['mallory', 'mine']]);
    const everyone = (await c.root.get('/api/log/?type=2&page_size=100')).json.data;
    assert.equal(everyone.total, 4);
    assert.deepEqual(new Set(everyone.items.map((x: any) => x.username)), new Set(['alice', 'mallory']));
    assert.equal((await c.root.get('/api/log/?type=2&username=mallory')).json.data.total, 1);
    assert.deepEqual((await c.root.get('/api/log/?username=nobody')).json.data, { page: 1, page_size: 10, total: 0, items: [] });
    assert.equal((await c.root.get('/api/log/stat?type=2')).json.data.quota, 4 * CHAT_COST);
    assert.equal((await c.root.get('/api/log/stat?type=2&username=alice')).json.data.quota, 3 * CHAT_COST);
    // Every user's buckets are summed by model, as new-api's GetAllQuotaDates (no user); by username, that user's.
    const data = (await c.root.get(`/api/data/?start_timestamp=${since - 3600}&end_timestamp=${since + 3600}`)).json.data;
    assert.deepEqual(data.map((x: any) => [x.user_id, x.username, x.model_name, x.count, x.quota]), [[0, '', 'gpt-4o', 4, 4 * CHAT_COST]]);
    const mine = (await c.root.get(`/api/data/?username=mallory&start_timestamp=${since - 3600}`)).json.data;
    assert.deepEqual(mine.map((x: any) => [x.user_id, x.username, x.count]), [[mallory.id, 'mallory', 1]]);
    for (const path of ['/api/log/', '/api/log/stat', '/api/data/']) {
      const r = await alice.b.get(path);
      assert.deepEqual([r.status, r.json.code], [403, 'AUTH_INSUFFICIENT_PRIVILEGE'], path);
    }
  });

  test('prices: public, the edge\'s enabled models only; the caller\'s models and group', async () => {
    assert.equal((await c.st.edge.cli('edge', 'model', 'set', 'slow-model', '--reserve', '100', '--disabled')).error, null);
    const anonymous = await c.account.browser().get('/api/pricing');
    assert.equal(anonymous.status, 200, anonymous.text);
    const p = anonymous.json;
    assert.equal(p.success, true);
    const row = p.data.find((m: any) => m.model_name === 'gpt-4o');
    assert.ok(row, anonymous.text);
    for (const k of ['quota_type', 'model_ratio', 'model_price', 'completion_ratio']) assert.equal(typeof row[k], 'number', k);
    assert.ok(Array.isArray(row.enable_groups));
    assert.ok(!p.data.some((m: any) => m.model_name === 'slow-model'), 'a disabled model is not listed');
    assert.deepEqual(Object.keys(p.usable_group), ['default']);
    assert.equal(typeof p.group_ratio.default, 'number');
    const signedIn = (await alice.b.get('/api/pricing')).json;
    assert.deepEqual(signedIn.data, p.data);
    const models = (await alice.b.get('/api/user/models')).json.data;
    assert.ok(models.includes('gpt-4o') && !models.includes('slow-model'), JSON.stringify(models));
    const groups = (await alice.b.get('/api/user/self/groups')).json.data;
    assert.deepEqual(Object.keys(groups), ['default']);
    assert.equal(groups.default.desc, 'default');
    assert.equal(typeof groups.default.ratio, 'number');
    assert.equal((await c.account.browser().get('/api/user/models')).status, 401);
  });

  test('GET /api/user/models?group= answers the models of that group, only for the caller\'s own group', async () => {
    assert.equal((await c.st.edge.cli('edge', 'model', 'set', 'vip-model', '--reserve', '100', '--group', 'vip')).error, null);
    const modelsOf = async (b: Browser, q: string) => (await b.get(`/api/user/models${q}`)).json;
    const every = (await modelsOf(alice.b, '')).data;
    assert.ok(every.includes('vip-model') && every.includes('gpt-4o'), JSON.stringify(every));
    const own = await modelsOf(alice.b, '?group=default');
    assert.equal(own.success, true, JSON.stringify(own));
    assert.ok(own.data.includes('gpt-4o') && !own.data.includes('vip-model'), JSON.stringify(own.data));
    assert.deepEqual((await modelsOf(alice.b, '?group=')).data, every, 'an empty group is every group, as new-api');
    for (const group of ['vip', 'auto']) {
      const denied = await alice.b.get(`/api/user/models?group=${group}`);
      assert.deepEqual([denied.status, denied.json.success, denied.json.code], [200, false, 'MODEL_GROUP_DENIED'], denied.text);
      assert.match(denied.json.message, new RegExp(group));
    }
    assert.equal((await c.root.request('PUT', `/api/user/${mallory.id}/group`, { body: { group: 'vip' } })).json.success, true);
    assert.deepEqual((await modelsOf(mallory.b, '?group=vip')).data, ['vip-model']);
    assert.equal((await modelsOf(mallory.b, '?group=default')).code, 'MODEL_GROUP_DENIED');
    assert.equal((await alice.b.get(`/api/user/models?group=${'x'.repeat(65)}`)).json.code, 'INVALID_PARAMETERS');
  });
});
