import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from '../../helpers/http.js';
import { eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

// Top-up codes (AP17, AP18, AS09–AS13, AS56, AS57) with the edge co-hosted: admins make codes whose keys are shown
// once; a customer redeems one exactly once (also under concurrency); every other code answers alike.
eachPlacement('customer API: top-up codes', (v, apart) => {
  let c: CustomerStack;
  let alice: { b: Browser; id: number };
  let mallory: { b: Browser; id: number };
  const codes: string[] = [];
  const quotaOf = async (b: Browser) => (await b.get('/api/user/self')).json.data.quota as number;

  async function make(body: Record<string, unknown>) {
    const r = await c.root.post('/api/redemption/', body);
    assert.equal(r.json.success, true, r.text);
    codes.push(...r.json.data);
    return r.json.data as string[];
  }
  const idOf = async (name: string) => (await c.root.get(`/api/redemption/search?keyword=${name}`)).json.data.items[0].id as number;

  before(async () => {
    c = await startCustomerStack(v, { apart });
    alice = await c.customer('alice');
    mallory = await c.customer('mallory');
  });
  after(async () => {
    const all = c.everything();
    for (const code of codes) assert.ok(!all.includes(code), 'a code reached a log');
    await c.close();
  });

  test('admins create codes (keys shown once, listed masked); a customer redeems one once; others answer alike', async () => {
    const keys = await make({ name: 'promo', quota: 1000, count: 3, expired_time: 0 });
    assert.equal(keys.length, 3);
    assert.equal(new Set(keys).size, 3);
    const list = await c.root.get('/api/redemption/?p=1&page_size=10');
    assert.equal(list.json.data.total, 3);
    for (const k of keys) assert.ok(!list.text.includes(k), 'a listed code shows its key');
    assert.deepEqual(list.json.data.items.map((x: any) => [x.name, x.quota, x.status]), [['promo', 1000, 1], ['promo', 1000, 1], ['promo', 1000, 1]]);

    const r = await alice.b.post('/api/user/topup', { key: keys[0] });
    assert.deepEqual(r.json, { success: true, message: '', data: 1000 });
    assert.equal(await quotaOf(alice.b), 1000);
    for (const [b, key] of [[alice.b, keys[0]], [mallory.b, keys[0]], [alice.b, 'no-such-code-0123456789abcdef'], [alice.b, 'x'.repeat(200)], [alice.b, '  ']] as const) {
      const again = await b.post('/api/user/topup', { key });
      assert.deepEqual([again.status, again.json.success, again.json.code], [200, false, 'TOPUP_CODE_INVALID']);
    }
    assert.equal(await quotaOf(alice.b), 1000);
    assert.equal(await quotaOf(mallory.b), 0);
    const used = (await c.root.get('/api/redemption/?page_size=10')).json.data.items.find((x: any) => x.status === 3);
    assert.equal(used.used_user_id, alice.id);

    const history = (await alice.b.get('/api/user/topup/self')).json.data;
    assert.deepEqual([history.total, history.items[0].amount, history.items[0].payment_method, history.items[0].user_id], [1, 1000, 'redemption', alice.id]);
    assert.equal((await mallory.b.get('/api/user/topup/self')).json.data.total, 0);
    const topupLog = (await alice.b.get('/api/log/self?type=1')).json.data.items;
    assert.deepEqual(topupLog.map((x: any) => x.quota), [1000]);
  });

  test('concurrent redemptions of one code credit it once', async () => {
    const [key] = await make({ name: 'race', quota: 700, count: 1 });
    const before = [await quotaOf(alice.b), await quotaOf(mallory.b)];
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? alice.b : mallory.b).post('/api/user/topup', { key })));
    assert.equal(answers.filter((a) => a.json.success).length, 1, answers.map((a) => a.text).join('\n'));
    assert.ok(answers.every((a) => a.status === 200 && (a.json.success || a.json.code === 'TOPUP_CODE_INVALID')));
    const after = [await quotaOf(alice.b), await quotaOf(mallory.b)];
    assert.equal(after[0]! + after[1]! - before[0]! - before[1]!, 700);
  });

  test('admins change, disable and delete codes; a disabled or deleted code is refused', async () => {
    const [key] = await make({ name: 'change', quota: 10, count: 1 });
    const id = await idOf('change');
    const changed = await c.root.request('PUT', '/api/redemption/', { body: { id, name: 'changed', quota: 25, expired_time: 0 } });
    assert.deepEqual([changed.json.data.name, changed.json.data.quota], ['changed', 25]);
    const off = await c.root.request('PUT', '/api/redemption/?status_only=true', { body: { id, status: 2 } });
    assert.equal(off.json.data.status, 2);
    assert.equal((await alice.b.post('/api/user/topup', { key })).json.code, 'TOPUP_CODE_INVALID');
    assert.equal((await c.root.request('PUT', '/api/redemption/?status_only=true', { body: { id, status: 1 } })).json.data.status, 1);
    assert.deepEqual((await c.root.delete(`/api/redemption/${id}`)).json, { success: true, message: '' });
    assert.equal((await alice.b.post('/api/user/topup', { key })).json.code, 'TOPUP_CODE_INVALID');
    for (const r of [await c.root.delete(`/api/redemption/${id}`), await c.root.request('PUT', '/api/redemption/', { body: { id, name: 'x', quota: 1 } })]) {
      assert.deepEqual([r.status, r.json.code], [200, 'TOPUP_CODE_NOT_FOUND']);
    }
  });

  test('AS56 reads one code, its key masked; AS57 deletes the used, disabled and expired codes and answers how many, leaving the usable ones', async () => {
    const [key] = await make({ name: 'one', quota: 42, count: 1 });
    const id = await idOf('one');
    const one = await c.root.get(`/api/redemption/${id}`);
    assert.equal(one.json.success, true, one.text);
    assert.deepEqual({ ...one.json.data, created_time: 0 }, { id, name: 'one', key: `${key!.slice(0, 4)}**********${key!.slice(-4)}`, status: 1, quota: 42, created_time: 0, redeemed_time: 0, used_user_id: 0, expired_time: 0 });
    await make({ name: 'gone', quota: 1, count: 1 });
    const gone = await idOf('gone');
    assert.equal((await c.root.delete(`/api/redemption/${gone}`)).json.success, true);
    for (const missing of [999999, gone]) assert.deepEqual((await c.root.get(`/api/redemption/${missing}`)).json.code, 'TOPUP_CODE_NOT_FOUND', String(missing));
    assert.equal((await c.root.get('/api/redemption/abc')).status, 400);

    // One of each: used, disabled, expired (its expiry passed since it was made), usable, usable until later.
    const [used] = await make({ name: 'inv-used', quota: 5, count: 1 });
    assert.equal((await alice.b.post('/api/user/topup', { key: used })).json.success, true);
    await make({ name: 'inv-off', quota: 5, count: 1 });
    await c.root.request('PUT', '/api/redemption/?status_only=true', { body: { id: await idOf('inv-off'), status: 2 } });
    await make({ name: 'inv-expired', quota: 5, count: 1, expired_time: Math.floor(Date.now() / 1000) + 3600 });
    await c.st.edge.ctx.db.updateTable('edge_redemptions').set({ expired_time: Math.floor(Date.now() / 1000) - 5 }).where('name', '=', 'inv-expired').execute();
    await make({ name: 'inv-later', quota: 5, count: 1, expired_time: Math.floor(Date.now() / 1000) + 3600 });
    const listed = async () => (await c.root.get('/api/redemption/?page_size=100')).json.data.items as { name: string; status: number; expired_time: number }[];
    const now = Math.floor(Date.now() / 1000);
    const before = await listed();
    const usable = before.filter((x) => x.status === 1 && (x.expired_time === 0 || x.expired_time >= now));
    assert.ok(before.length - usable.length >= 3);

    const r = await c.root.delete('/api/redemption/invalid');
    assert.deepEqual(r.json, { success: true, message: '', data: before.length - usable.length });
    const after = await listed();
    assert.deepEqual(after.map((x) => x.name), usable.map((x) => x.name));
    for (const name of ['inv-used', 'inv-off', 'inv-expired']) assert.ok(!after.some((x) => x.name === name), name);
    assert.ok(after.some((x) => x.name === 'inv-later') && after.some((x) => x.name === 'one'));
    assert.deepEqual((await c.root.delete('/api/redemption/invalid')).json.data, 0, 'nothing left to delete');
    assert.ok(c.account.log.lines.some((l) => l.includes('"audit":"redemption.delete_invalid"') && l.includes(`"count":${before.length - usable.length}`)));
  });

  test('bad input gets a clear code; customers cannot reach the admin routes', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    for (const body of [{ name: '', quota: 1, count: 1 }, { name: 'x'.repeat(21), quota: 1, count: 1 }, { name: 'n', quota: 1, count: 0 }, { name: 'n', quota: 1, count: 101 }, { name: 'n', quota: 0, count: 1 }, { name: 'n', quota: 1, count: 1, expired_time: past }]) {
      const r = await c.root.post('/api/redemption/', body);
      assert.deepEqual([r.status, r.json.code], [200, 'CUSTOMER_INVALID'], JSON.stringify(body));
    }
    for (const body of [{ name: 'n', quota: 'lots', count: 1 }, { name: 'n', quota: 1, count: 1.5 }]) assert.equal((await c.root.post('/api/redemption/', body)).json.code, 'INVALID_PARAMETERS');
    assert.equal((await alice.b.post('/api/user/topup', { key: 12345 })).json.code, 'INVALID_PARAMETERS');
    for (const [method, path] of [['GET', '/api/redemption/'], ['GET', '/api/redemption/search'], ['POST', '/api/redemption/'], ['PUT', '/api/redemption/'], ['DELETE', '/api/redemption/1'], ['GET', '/api/redemption/1'], ['DELETE', '/api/redemption/invalid']] as const) {
      const r = await alice.b.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: { id: 1, name: 'n', quota: 1, count: 1 } });
      assert.deepEqual([r.status, r.json.code], [403, 'AUTH_INSUFFICIENT_PRIVILEGE'], path);
    }
  });
});
