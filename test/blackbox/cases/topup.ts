import assert from 'node:assert/strict';
import { test } from 'node:test';
import { balanceOf, type Product } from '../stack.js';

const now = () => Math.floor(Date.now() / 1000);

/** Top-up codes (admin /api/redemption/, customer /api/user/topup) and the admin's quota edit (PUT /api/user/). */
export function topupCases(product: () => Product) {
  async function createCodes(p: Product, name: string, quota: number, count: number, expired_time = 0): Promise<string[]> {
    const r = await p.admin.post('/api/redemption/', { name, quota, count, expired_time });
    assert.equal(r.json?.success, true, `POST /api/redemption/: ${r.text}`);
    const keys = r.json.data as string[];
    assert.equal(keys.length, count);
    assert.equal(new Set(keys).size, count, 'distinct codes');
    for (const k of keys) p.secrets.add(k);
    return keys;
  }

  async function codeRow(p: Product, name: string) {
    const r = await p.admin.get(`/api/redemption/search?keyword=${encodeURIComponent(name)}`);
    assert.equal(r.json?.success, true, r.text);
    return r.json.data.items as any[];
  }

  test('20 concurrent redemptions of one code by two users credit it exactly once; a second redemption is refused', async () => {
    const p = product();
    const a = await p.register('racera');
    const b = await p.register('racerb');
    const AMOUNT = 123_457;
    const [code] = await createCodes(p, 'race prize', AMOUNT, 1);
    const started = now();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? b : a).web.post('/api/user/topup', { key: code })));
    const won = answers.filter((r) => r.json?.success === true);
    assert.equal(won.length, 1, answers.map((r) => r.text).join('\n'));
    assert.equal(won[0]!.json.data, AMOUNT);
    for (const r of answers.filter((r) => r.json?.success !== true)) {
      assert.equal(r.json?.code, 'TOPUP_CODE_INVALID', r.text);
      assert.ok(!r.text.includes(code), 'a refusal does not echo the code');
    }
    const [ba, bb] = [await balanceOf(a), await balanceOf(b)];
    assert.equal(ba.quota + bb.quota, AMOUNT, `one credit: ${JSON.stringify([ba, bb])}`);
    const winner = ba.quota === AMOUNT ? a : b;
    const loser = winner === a ? b : a;

    const again = await winner.web.post('/api/user/topup', { key: code });
    assert.equal(again.json?.success, false);
    assert.equal(again.json.code, 'TOPUP_CODE_INVALID');
    const unknown = await loser.web.post('/api/user/topup', { key: code.slice(0, -2) + (code.endsWith('00') ? '11' : '00') });
    assert.equal(unknown.json.code, 'TOPUP_CODE_INVALID', 'an unknown code has the same answer as a used one');
    assert.equal((await balanceOf(winner)).quota, AMOUNT);
    assert.equal((await balanceOf(loser)).quota, 0);

    const history = await winner.web.get('/api/user/topup/self');
    assert.equal(history.json?.success, true, history.text);
    assert.equal(history.json.data.total, 1);
    const h = history.json.data.items[0];
    assert.equal(h.amount, AMOUNT);
    assert.equal(h.user_id, winner.id);
    assert.equal(h.status, 'success');
    assert.equal(h.payment_method, 'redemption');
    assert.ok(Math.abs(h.money - AMOUNT / 500_000) < 1e-9, `money ${h.money}`);
    assert.ok(!history.text.includes(code));
    assert.equal((await loser.web.get('/api/user/topup/self')).json.data.total, 0);

    const log = await winner.web.get('/api/log/self?type=1');
    assert.equal(log.json?.success, true, log.text);
    assert.equal(log.json.data.total, 1, 'a top-up row (type 1)');
    assert.equal(log.json.data.items[0].quota, AMOUNT);
    assert.ok(log.json.data.items[0].created_at >= started - 1);
    assert.ok(!log.text.includes(code));

    const [row] = await codeRow(p, 'race prize');
    assert.equal(row.status, 3, 'used');
    assert.equal(row.used_user_id, winner.id);
    assert.equal(row.quota, AMOUNT);
    assert.ok(row.redeemed_time >= started - 1);
    assert.notEqual(row.key, code);
    assert.ok(row.key.startsWith(code.slice(0, 4)) && row.key.endsWith(code.slice(-4)) && row.key.includes('*'), `masked: ${row.key}`);
  });

  test('a disabled, a deleted and an expired code are refused; the others credit once each; the list never shows a code', async () => {
    const p = product();
    const c = await p.register('collector');
    const keys = await createCodes(p, 'batch of three', 1000, 3);
    const listed = await p.admin.get('/api/redemption/?p=1&page_size=100');
    assert.equal(listed.json?.success, true, listed.text);
    for (const k of keys) assert.ok(!listed.text.includes(k), 'the list shows codes masked');
    const rows = (await codeRow(p, 'batch of three')).sort((x, y) => x.id - y.id);
    assert.equal(rows.length, 3);
    assert.ok(rows.every((r) => r.status === 1 && r.quota === 1000 && r.used_user_id === 0));
    // Which row is which code: by the masked ends.
    const rowOf = (k: string) => rows.find((r) => r.key.startsWith(k.slice(0, 4)) && r.key.endsWith(k.slice(-4)))!;
    const [k1, k2, k3] = keys as [string, string, string];

    const off = await p.admin.request('PUT', '/api/redemption/?status_only=true', { body: { id: rowOf(k1).id, status: 2 } });
    assert.equal(off.json?.success, true, off.text);
    const del = await p.admin.delete(`/api/redemption/${rowOf(k2).id}`);
    assert.equal(del.json?.success, true, del.text);
    for (const k of [k1, k2]) assert.equal((await c.web.post('/api/user/topup', { key: k })).json.code, 'TOPUP_CODE_INVALID');
    assert.equal((await balanceOf(c)).quota, 0);

    const edit = await p.admin.request('PUT', '/api/redemption/', { body: { id: rowOf(k3).id, name: 'batch of three', quota: 2500, expired_time: 0 } });
    assert.equal(edit.json?.success, true, edit.text);
    const ok = await c.web.post('/api/user/topup', { key: k3 });
    assert.equal(ok.json?.success, true, ok.text);
    assert.equal(ok.json.data, 2500, 'the edited amount');
    assert.equal((await balanceOf(c)).quota, 2500);

    const [expiring] = await createCodes(p, 'expires soon', 1000, 1, now() + 1);
    await new Promise((r) => setTimeout(r, 2100));
    assert.equal((await c.web.post('/api/user/topup', { key: expiring })).json.code, 'TOPUP_CODE_INVALID', 'an expired code');
    assert.equal((await balanceOf(c)).quota, 2500);
  });

  test('PUT /api/user/ sets a user\'s quota as an audited movement: the reason is in the user\'s log (type 3) and the admin\'s', async () => {
    const p = product();
    const c = await p.register('refunded');
    const reason = `refund for ticket ${Date.now()}`;
    await p.fund(c, 777_777, reason);
    assert.deepEqual(await balanceOf(c), { quota: 777_777, used_quota: 0, request_count: 0 });
    await p.fund(c, 1000, 'correction');
    assert.equal((await balanceOf(c)).quota, 1000);

    const own = await c.web.get('/api/log/self?type=3');
    assert.equal(own.json?.success, true, own.text);
    assert.equal(own.json.data.total, 2, own.text);
    assert.ok(own.json.data.items.some((r: any) => r.content.includes(reason)), `the reason is in the user's log: ${own.text}`);
    const all = await p.admin.get(`/api/log/?type=3&username=${encodeURIComponent(c.username)}`);
    assert.equal(all.json?.success, true, all.text);
    assert.ok(all.json.data.items.some((r: any) => r.user_id === c.id && r.content.includes(reason)), all.text);

    const users = await p.admin.get(`/api/user/?p=1&page_size=100`);
    assert.equal(users.json?.success, true, users.text);
    const listed = (users.json.data.items as any[]).find((u) => u.id === c.id);
    assert.equal(listed?.quota, 1000, 'the admin list shows the wallet');

    const negative = await p.admin.request('PUT', '/api/user/', { body: { id: c.id, quota: -5, reason: 'below zero' } });
    assert.equal(negative.json?.success, false, negative.text);
    assert.equal((await balanceOf(c)).quota, 1000);
  });

  test('the admin reads every user\'s usage: /api/log/, /api/log/stat, /api/data/', async () => {
    const p = product();
    const since = now() - 86_400;
    for (const path of ['/api/log/?type=0', `/api/log/stat?type=2&start_timestamp=${since}`, `/api/data/?start_timestamp=${since}&end_timestamp=${now() + 3600}`]) {
      const r = await p.admin.get(path);
      assert.equal(r.json?.success, true, `${path}: ${r.text}`);
    }
    const logs = await p.admin.get('/api/log/?type=2&p=1&page_size=100');
    const users = new Set((logs.json.data.items as any[]).map((r) => r.user_id));
    assert.ok(users.size >= 2, `consume rows of several users (the earlier cases' calls): ${logs.text.slice(0, 500)}`);
  });
}
