import assert from 'node:assert/strict';
import { test } from 'node:test';
import { balanceOf, CALL_COST, createToken, eventually, tokenBody, tokenOf, type Product } from '../stack.js';

/** Every token, log and code route checks the owner: another user's id is refused and left untouched. */
export function idorCases(product: () => Product) {
  test('user B cannot read, change, disable, delete or reveal user A\'s token by id; A\'s token is untouched and still works', async () => {
    const p = product();
    const a = await p.register('alice');
    const b = await p.register('bob');
    await p.fund(a, 100_000);
    const target = await createToken(p, a, 'alice main', { unlimited_quota: false, remain_quota: 50_000 });
    const before = await tokenOf(a, target.id);
    const mine = await createToken(p, b, 'bob own');

    const attempts = [
      await b.web.get(`/api/token/${target.id}`),
      await b.web.request('PUT', '/api/token/', { body: { id: target.id, ...tokenBody('stolen', { unlimited_quota: true }) } }),
      await b.web.request('PUT', '/api/token/?status_only=true', { body: { id: target.id, status: 2 } }),
      await b.web.delete(`/api/token/${target.id}`),
      await b.web.post(`/api/token/${target.id}/key`),
    ];
    for (const r of attempts) {
      assert.equal(r.json?.success, false, `refused: ${r.text}`);
      assert.equal(r.json.code, 'TOKEN_NOT_FOUND', `one answer for "not yours" and "no such token": ${r.text}`);
      assert.equal(r.json.data ?? null, null);
    }
    const batchKeys = await b.web.post('/api/token/batch/keys', { ids: [target.id] });
    assert.ok(batchKeys.json?.success === false || Object.keys(batchKeys.json.data.keys ?? {}).length === 0, batchKeys.text);
    const batchDelete = await b.web.post('/api/token/batch', { ids: [target.id, mine.id] });
    assert.ok(batchDelete.json?.success === false || batchDelete.json.data === 1, `only B's own token may go: ${batchDelete.text}`);
    for (const r of [...attempts, batchKeys, batchDelete]) assert.ok(!r.text.includes(target.key) && !r.text.includes(target.key.slice(-12)), 'no answer carries A\'s key');

    const list = await b.web.get('/api/token/');
    assert.ok(!list.json.data.items.some((t: any) => t.id === target.id));
    const byKey = await b.web.get(`/api/token/search?token=${encodeURIComponent(target.key)}`);
    assert.equal(byKey.json.data.items.length, 0, 'B cannot find A\'s token by its key');
    const byName = await b.web.get('/api/token/search?keyword=alice');
    assert.equal(byName.json.data.items.length, 0);

    const after = await tokenOf(a, target.id);
    assert.deepEqual(after, before, 'A\'s token is untouched');
    const reveal = await a.web.post(`/api/token/${target.id}/key`);
    assert.equal(reveal.json.success, true, `B's reveal did not use up A's one showing after the create answer: ${reveal.text}`);
    assert.equal(reveal.json.data.key, target.key);

    const r = await p.chat(target.key);
    assert.equal(r.status, 200, r.text);
    await eventually(() => balanceOf(a), (x) => x.request_count === 1, 'A\'s call is settled');
    assert.equal((await tokenOf(a, target.id)).used_quota, CALL_COST);
  });

  test('usage is per user: B sees none of A\'s calls in /api/log/self, /api/log/self/stat or /api/data/self, whatever the query says', async () => {
    const p = product();
    const a = await p.register('spender');
    const b = await p.register('snoop');
    await p.fund(a, 100_000);
    const t = await createToken(p, a, 'spender key');
    assert.equal((await p.chat(t.key)).status, 200);
    await eventually(() => balanceOf(a), (x) => x.request_count === 1, 'settled');
    const since = Math.floor(Date.now() / 1000) - 3600;
    const logs = await b.web.get(`/api/log/self?type=2&user_id=${a.id}&username=${a.username}&token_name=spender%20key`);
    assert.equal(logs.json?.success, true, logs.text);
    assert.equal(logs.json.data.total, 0);
    const stat = await b.web.get(`/api/log/self/stat?type=2&user_id=${a.id}`);
    assert.equal(stat.json.data.quota, 0);
    const data = await b.web.get(`/api/data/self?start_timestamp=${since}&end_timestamp=${since + 7200}&user_id=${a.id}`);
    assert.deepEqual(data.json.data, []);
    const topups = await b.web.get('/api/user/topup/self');
    assert.equal(topups.json.data.total, 0);
  });

  test('a customer is refused the admin routes: codes, every user\'s logs and data, the quota edit', async () => {
    const p = product();
    const m = await p.register('mallory');
    const before = await balanceOf(m);
    const attempts = [
      await m.web.get('/api/redemption/'),
      await m.web.post('/api/redemption/', { name: 'free', quota: 1_000_000, count: 1, expired_time: 0 }),
      await m.web.get('/api/log/'),
      await m.web.get('/api/log/stat'),
      await m.web.get('/api/data/'),
      await m.web.request('PUT', '/api/user/', { body: { id: m.id, quota: 1_000_000_000, reason: 'mine now' } }),
    ];
    for (const r of attempts) {
      assert.ok(r.status === 401 || r.status === 403 || r.json?.success === false, `refused: ${r.status} ${r.text}`);
      assert.equal(r.json?.data ?? null, null, r.text);
    }
    assert.deepEqual(await balanceOf(m), before);
  });
}
