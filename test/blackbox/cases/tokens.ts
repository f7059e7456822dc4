import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createToken, tokenBody, tokenOf, type Product } from '../stack.js';

const TOKEN_FIELDS = ['id', 'user_id', 'key', 'name', 'status', 'expired_time', 'remain_quota', 'unlimited_quota', 'model_limits_enabled', 'model_limits', 'allow_ips', 'group', 'used_quota', 'accessed_time', 'created_time'];

/** The masked form every read shows (new-api's MaskTokenKey): the key's first and last 4 characters around asterisks. */
export function assertMasked(shown: string, key: string) {
  assert.notEqual(shown, key);
  assert.ok(shown.startsWith(key.slice(0, 4)) && shown.endsWith(key.slice(-4)) && /\*{4,}/.test(shown), `masked: ${shown}`);
  assert.ok(!shown.includes(key.slice(4, -4)), 'only the ends of the key are shown');
}

/** Tokens (/api/token/*): fields, the key shown once, masked reads, list, search, update, delete. */
export function tokenCases(product: () => Product) {
  test('a new customer sees new-api\'s /api/user/self: quota 0, used_quota 0, request_count 0, group default', async () => {
    const p = product();
    const c = await p.register('fresh');
    const self = await c.web.get('/api/user/self');
    assert.equal(self.json.success, true);
    assert.equal(self.json.data.username, c.username);
    assert.equal(self.json.data.quota, 0);
    assert.equal(self.json.data.used_quota, 0);
    assert.equal(self.json.data.request_count, 0);
    assert.equal(self.json.data.group, 'default');
  });

  test('POST /api/token/ answers the token with its full key; every later read shows it masked; a later reveal is a clear error', async () => {
    const p = product();
    const c = await p.register('keys');
    const body = tokenBody('my laptop', { unlimited_quota: false, remain_quota: 5000, model_limits_enabled: true, model_limits: 'gpt-4o', allow_ips: '127.0.0.1', expired_time: Math.floor(Date.now() / 1000) + 86_400 });
    const created = await c.web.post('/api/token/', body);
    assert.equal(created.json?.success, true, created.text);
    const t = created.json.data;
    for (const f of TOKEN_FIELDS) assert.ok(f in t, `the create answer has ${f}: ${created.text}`);
    const key: string = t.key;
    assert.match(key, /^(svc_sk_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|sk-[A-Za-z0-9]{48})$/, 'SPEC\'s developer credential (or an imported new-api key)');
    p.secrets.add(key);
    p.secrets.add(key.split('.').pop()!);
    assert.equal(t.name, 'my laptop');
    assert.equal(t.user_id, c.id);
    assert.equal(t.status, 1);
    assert.equal(t.remain_quota, 5000);
    assert.equal(t.unlimited_quota, false);
    assert.equal(t.model_limits_enabled, true);
    assert.equal(t.model_limits, 'gpt-4o');
    assert.equal(t.allow_ips, '127.0.0.1');
    assert.equal(t.expired_time, body.expired_time);
    assert.equal(t.used_quota, 0);

    // Every read: masked.
    const one = await c.web.get(`/api/token/${t.id}`);
    assert.equal(one.json.success, true);
    assertMasked(one.json.data.key, key);
    for (const f of TOKEN_FIELDS.filter((f) => f !== 'key' && f !== 'accessed_time')) assert.deepEqual(one.json.data[f], t[f], f);
    const list = await c.web.get('/api/token/?p=1&page_size=10');
    assert.equal(list.json.success, true);
    assert.equal(list.json.data.total, 1);
    assert.equal(list.json.data.items.length, 1);
    assertMasked(list.json.data.items[0].key, key);
    for (const r of [one, list]) assert.ok(!r.text.includes(key) && !r.text.includes(key.split('.').pop()!), 'no read carries the key');

    // The create answer, and once more the first /key after it (new-api's dashboard copies the key with /key);
    // then never again, alone or in a batch.
    const first = await c.web.post(`/api/token/${t.id}/key`);
    assert.equal(first.json.success, true, first.text);
    assert.equal(first.json.data.key, key);
    for (const again of [await c.web.post(`/api/token/${t.id}/key`), await c.web.post('/api/token/batch/keys', { ids: [t.id] })]) {
      assert.equal(again.json.success, false, again.text);
      assert.equal(again.json.code, 'TOKEN_KEY_ALREADY_SHOWN', again.text);
      assert.ok(!again.text.includes(key.split('.').pop()!), 'a refused reveal carries no key');
    }

    // The batch reveal (POST /api/token/batch/keys): each new key once.
    const more = [await c.web.post('/api/token/', tokenBody('batch one')), await c.web.post('/api/token/', tokenBody('batch two'))].map((r) => r.json.data);
    for (const m of more) p.secrets.add(m.key);
    const batch = await c.web.post('/api/token/batch/keys', { ids: more.map((m) => m.id) });
    assert.equal(batch.json.success, true, batch.text);
    assert.deepEqual(batch.json.data.keys, Object.fromEntries(more.map((m) => [String(m.id), m.key])));
    const batchAgain = await c.web.post('/api/token/batch/keys', { ids: [more[1].id] });
    assert.equal(batchAgain.json.code, 'TOKEN_KEY_ALREADY_SHOWN', batchAgain.text);
  });

  test('GET /api/token/ lists only the own tokens, newest first, paged; search finds by name and by the full key', async () => {
    const p = product();
    const c = await p.register('list');
    const other = await p.register('other');
    await createToken(p, other, 'alpha of someone else');
    const a = await createToken(p, c, 'alpha');
    const b = await createToken(p, c, 'beta');
    const g = await createToken(p, c, 'gamma');
    const page1 = await c.web.get('/api/token/?p=1&page_size=2');
    assert.equal(page1.json.success, true, page1.text);
    assert.equal(page1.json.data.total, 3);
    assert.deepEqual(page1.json.data.items.map((t: any) => t.id), [g.id, b.id]);
    const page2 = await c.web.get('/api/token/?p=2&page_size=2');
    assert.deepEqual(page2.json.data.items.map((t: any) => t.id), [a.id]);

    const byName = await c.web.get('/api/token/search?keyword=alph');
    assert.equal(byName.json.success, true, byName.text);
    assert.deepEqual(byName.json.data.items.map((t: any) => t.id), [a.id], 'the other user\'s "alpha…" is not found');
    const byKey = await c.web.get(`/api/token/search?token=${encodeURIComponent(b.key)}`);
    assert.deepEqual(byKey.json.data.items.map((t: any) => t.id), [b.id]);
    assert.ok(!byKey.text.includes(b.key));
    const wrongSecret = b.key.slice(0, -4) + (b.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const byWrong = await c.web.get(`/api/token/search?token=${encodeURIComponent(wrongSecret)}`);
    assert.equal(byWrong.json.data.items.length, 0, 'a key with a wrong secret finds nothing');
  });

  test('PUT /api/token/ changes the settings (and ?status_only=true only the status); DELETE and POST /api/token/batch delete', async () => {
    const p = product();
    const c = await p.register('edit');
    const t = await createToken(p, c, 'before');
    const put = await c.web.request('PUT', '/api/token/', { body: { id: t.id, ...tokenBody('after', { unlimited_quota: false, remain_quota: 777, allow_ips: '10.0.0.0/8' }) } });
    assert.equal(put.json.success, true, put.text);
    assert.equal(put.json.data.name, 'after');
    assert.equal(put.json.data.remain_quota, 777);
    assert.equal(put.json.data.allow_ips, '10.0.0.0/8');
    assertMasked(put.json.data.key, t.key);
    const statusOnly = await c.web.request('PUT', '/api/token/?status_only=true', { body: { id: t.id, status: 2, name: 'ignored' } });
    assert.equal(statusOnly.json.success, true, statusOnly.text);
    const read = await tokenOf(c, t.id);
    assert.equal(read.status, 2);
    assert.equal(read.name, 'after', 'status_only changes nothing else');
    assert.equal(read.remain_quota, 777);

    const bad = await c.web.post('/api/token/', tokenBody('x'.repeat(51)));
    assert.equal(bad.json.success, false, 'a name over 50 characters is refused');
    assert.equal((await c.web.get('/api/token/')).json.data.total, 1, 'nothing was created');

    const del = await c.web.delete(`/api/token/${t.id}`);
    assert.equal(del.json.success, true, del.text);
    const gone = await c.web.get(`/api/token/${t.id}`);
    assert.equal(gone.json.success, false);
    assert.equal(gone.json.code, 'TOKEN_NOT_FOUND');
    const called = await p.chat(t.key);
    assert.equal(called.status, 401, `a deleted token's key is refused at the edge: ${called.text}`);

    const x = await createToken(p, c, 'x');
    const y = await createToken(p, c, 'y');
    const batch = await c.web.post('/api/token/batch', { ids: [x.id, y.id, t.id] });
    assert.equal(batch.json.success, true, batch.text);
    assert.equal(batch.json.data, 2);
    assert.equal((await c.web.get('/api/token/')).json.data.total, 0);
  });
}
