import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from '../../helpers/http.js';
import { CHAT_COST } from '../../helpers/stack.js';
import { chat, eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

const SETTINGS = { name: 'laptop', expired_time: -1, remain_quota: 10_000, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };
const masked = (key: string) => `${key.slice(0, 4)}**********${key.slice(-4)}`;

// new-api's token routes (AP01–AP09) on the account service, the tokens kept on a co-hosted edge: the key
// shown once, masked reads, paging, search, the owner check on every id, bad input with a clear code.
eachPlacement('customer API: tokens', (v, apart) => {
  let c: CustomerStack;
  let alice: { b: Browser; id: number };
  let mallory: { b: Browser; id: number };
  const keys: string[] = [];

  before(async () => {
    c = await startCustomerStack(v, { apart });
    alice = await c.customer('alice');
    mallory = await c.customer('mallory');
  });
  after(async () => {
    const all = c.everything();
    for (const key of keys) assert.ok(!all.includes(key) && !all.includes(key.slice(8)), 'a full key reached a log or a later answer');
    await c.close();
  });

  async function create(b: Browser, body: Record<string, unknown> = SETTINGS) {
    const r = await b.post('/api/token/', body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.success, true, r.text);
    keys.push(r.json.data.key);
    return r.json.data as typeof SETTINGS & { id: number; key: string; status: number; user_id: number };
  }

  test('create answers the full key once; every read masks it; the first /key call after it shows it, the next is refused', async () => {
    const t = await create(alice.b);
    assert.match(t.key, /^(svc_sk_|sk-)/);
    assert.equal(t.user_id, alice.id);
    assert.equal(t.status, 1);
    const read = await alice.b.get(`/api/token/${t.id}`);
    assert.equal(read.json.data.key, masked(t.key));
    assert.deepEqual({ ...read.json.data, key: '' }, { ...t, key: '' });
    const listed = (await alice.b.get('/api/token/')).json.data.items.find((x: any) => x.id === t.id);
    assert.equal(listed.key, masked(t.key));

    const first = await alice.b.post(`/api/token/${t.id}/key`);
    assert.deepEqual(first.json, { success: true, message: '', data: { key: t.key } });
    const again = await alice.b.post(`/api/token/${t.id}/key`);
    assert.equal(again.status, 200);
    assert.equal(again.json.success, false);
    assert.equal(again.json.code, 'TOKEN_KEY_ALREADY_SHOWN');
    assert.ok(!again.text.includes(t.key.slice(-8)));

    const [a, b] = [await create(alice.b, { ...SETTINGS, name: 'a' }), await create(alice.b, { ...SETTINGS, name: 'b' })];
    const batch = await alice.b.post('/api/token/batch/keys', { ids: [a.id, b.id] });
    assert.deepEqual(batch.json.data, { keys: { [a.id]: a.key, [b.id]: b.key } });
    assert.equal((await alice.b.post('/api/token/batch/keys', { ids: [a.id] })).json.code, 'TOKEN_KEY_ALREADY_SHOWN');
  });

  test('the key calls the edge: the call is charged to the wallet and the token, and shows in the token and the profile', async () => {
    const set = await c.root.request('PUT', '/api/user/', { body: { id: alice.id, quota: 100_000, reason: 'test credit' } });
    assert.equal(set.json.success, true, set.text);
    const t = await create(alice.b, { ...SETTINGS, name: 'sdk' });
    const r = await chat(c.st, t.key);
    assert.equal(r.status, 200, r.text);
    const after = (await alice.b.get(`/api/token/${t.id}`)).json.data;
    assert.equal(after.used_quota, CHAT_COST);
    assert.equal(after.remain_quota, SETTINGS.remain_quota - CHAT_COST);
    assert.ok(after.accessed_time > 0);
    const self = (await alice.b.get('/api/user/self')).json.data;
    assert.deepEqual([self.quota, self.used_quota, self.request_count], [100_000 - CHAT_COST, CHAT_COST, 1]);
    // A disabled token is refused by the edge, and nothing is charged.
    assert.equal((await alice.b.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 2 } })).json.data.status, 2);
    assert.equal((await chat(c.st, t.key)).status, 401);
    assert.equal((await alice.b.get('/api/user/self')).json.data.quota, 100_000 - CHAT_COST);
  });

  test('paging is new-api\'s (p, page_size or size), newest first; search by name and by key', async () => {
    const { b } = await c.customer('pager');
    const made = [];
    for (let i = 1; i <= 12; i++) made.push(await create(b, { ...SETTINGS, name: `key-${i}` }));
    const first = (await b.get('/api/token/?p=1&page_size=5')).json.data;
    assert.deepEqual([first.page, first.page_size, first.total], [1, 5, 12]);
    assert.deepEqual(first.items.map((t: any) => t.name), ['key-12', 'key-11', 'key-10', 'key-9', 'key-8']);
    const last = (await b.get('/api/token/?p=3&size=5')).json.data;
    assert.deepEqual(last.items.map((t: any) => t.name), ['key-2', 'key-1']);
    assert.equal((await b.get('/api/token/')).json.data.page_size, 10);
    assert.deepEqual((await b.get('/api/token/?p=9')).json.data.items, []);

    const byName = (await b.get('/api/token/search?keyword=key-1')).json.data;
    assert.deepEqual(byName.items.map((t: any) => t.name).sort(), ['key-1', 'key-10', 'key-11', 'key-12']);
    const byKey = (await b.get(`/api/token/search?token=${encodeURIComponent(made[4]!.key)}`)).json.data;
    assert.deepEqual(byKey.items.map((t: any) => t.id), [made[4]!.id]);
    // Another user's key finds nothing.
    assert.equal((await alice.b.get(`/api/token/search?token=${encodeURIComponent(made[4]!.key)}`)).json.data.total, 0);
  });

  test('PUT changes every setting, keeps what the body leaves out; status_only changes the status alone', async () => {
    const t = await create(alice.b, { ...SETTINGS, name: 'edit-me' });
    const put = await alice.b.request('PUT', '/api/token/', { body: { id: t.id, name: 'edited', remain_quota: 77, model_limits_enabled: true, model_limits: 'gpt-4o', allow_ips: null } });
    assert.equal(put.json.success, true, put.text);
    assert.deepEqual(
      [put.json.data.name, put.json.data.remain_quota, put.json.data.model_limits, put.json.data.allow_ips, put.json.data.expired_time, put.json.data.key],
      ['edited', 77, 'gpt-4o', '', -1, masked(t.key)],
    );
    const off = await alice.b.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 2, name: 'ignored' } });
    assert.deepEqual([off.json.data.status, off.json.data.name], [2, 'edited']);
    const bad = await alice.b.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 3 } });
    assert.deepEqual([bad.status, bad.json.code], [200, 'CUSTOMER_INVALID']);
  });

  test('another user\'s token id is refused everywhere and left untouched', async () => {
    const t = await create(alice.b, { ...SETTINGS, name: 'private' });
    const m = mallory.b;
    const refusals = [
      await m.get(`/api/token/${t.id}`),
      await m.request('PUT', '/api/token/', { body: { id: t.id, name: 'pwned', remain_quota: 999_999 } }),
      await m.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 2 } }),
      await m.delete(`/api/token/${t.id}`),
      await m.delete(`/api/token/${t.id}/`),
      await m.post(`/api/token/${t.id}/key`),
      await m.post('/api/token/batch/keys', { ids: [t.id] }),
    ];
    for (const r of refusals) {
      assert.equal(r.status, 200, r.text);
      assert.deepEqual([r.json.success, r.json.code], [false, 'TOKEN_NOT_FOUND'], r.text);
      assert.ok(!r.text.includes('private'));
    }
    assert.deepEqual((await m.post('/api/token/batch', { ids: [t.id] })).json.data, 0);
    assert.ok(!(await m.get('/api/token/?page_size=100')).json.data.items.some((x: any) => x.id === t.id));
    const still = (await alice.b.get(`/api/token/${t.id}`)).json.data;
    assert.deepEqual([still.name, still.remain_quota, still.status], ['private', SETTINGS.remain_quota, 1]);
    // Its one showing is still Alice's.
    assert.equal((await alice.b.post(`/api/token/${t.id}/key`)).json.data.key, t.key);
  });

  test('delete and batch delete remove only the caller\'s tokens; a deleted key stops working', async () => {
    const [a, b, d] = [await create(alice.b, { ...SETTINGS, name: 'd1' }), await create(alice.b, { ...SETTINGS, name: 'd2' }), await create(alice.b, { ...SETTINGS, name: 'd3' })];
    const other = await create(mallory.b, { ...SETTINGS, name: 'm1' });
    const del = await alice.b.delete(`/api/token/${a.id}/`);
    assert.deepEqual(del.json, { success: true, message: '' });
    assert.equal((await alice.b.get(`/api/token/${a.id}`)).json.code, 'TOKEN_NOT_FOUND');
    assert.equal((await alice.b.delete(`/api/token/${a.id}`)).json.code, 'TOKEN_NOT_FOUND');
    assert.equal((await alice.b.post('/api/token/batch', { ids: [b.id, d.id, other.id, a.id] })).json.data, 2);
    assert.equal((await mallory.b.get(`/api/token/${other.id}`)).json.data.name, 'm1');
    assert.equal((await chat(c.st, b.key)).status, 401);
  });

  test('bad input gets a clear code, never a 500; a customer cannot act for another user through the body', async () => {
    const invalid = [{ ...SETTINGS, name: '' }, { ...SETTINGS, name: 'x'.repeat(51) }, { ...SETTINGS, remain_quota: -1 }, { ...SETTINGS, allow_ips: 'not-an-ip' }, { ...SETTINGS, expired_time: 5 }];
    for (const body of invalid) {
      const r = await alice.b.post('/api/token/', body);
      assert.deepEqual([r.status, r.json.success, r.json.code], [200, false, 'CUSTOMER_INVALID'], JSON.stringify(body));
    }
    const typed = [
      ['POST', '/api/token/', { ...SETTINGS, remain_quota: 'lots' }],
      ['POST', '/api/token/', { ...SETTINGS, remain_quota: 1e300 }],
      ['PUT', '/api/token/', { name: 'no id' }],
      ['POST', '/api/token/batch', { ids: ['x'] }],
      ['GET', '/api/token/abc', undefined],
      ['GET', '/api/token/?page_size=101', undefined],
      ['GET', '/api/token/?p=0', undefined],
    ] as const;
    for (const [method, path, body] of typed) {
      const r = await alice.b.request(method, path, body === undefined ? {} : { body });
      assert.deepEqual([r.status, r.json.code], [400, 'INVALID_PARAMETERS'], `${method} ${path}`);
    }
    for (const body of [{ ids: [] }, { ids: Array.from({ length: 101 }, (_, i) => i + 1) }]) {
      assert.equal((await alice.b.post('/api/token/batch/keys', body)).json.code, 'CUSTOMER_INVALID');
    }
    // user_id in the body names nobody: the token is the caller's.
    const own = await create(alice.b, { ...SETTINGS, name: 'mine', user_id: mallory.id });
    assert.equal(own.user_id, alice.id);
    const anonymous = await c.account.browser().get('/api/token/');
    assert.deepEqual([anonymous.status, anonymous.json.code], [401, 'AUTH_UNAUTHORIZED']);
  });
});
