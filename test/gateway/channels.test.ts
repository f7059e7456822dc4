import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { assertAbilitiesConsistent } from './consistency.js';

const KEYS = ['sk-live-ALPHA-0123456789abcdef', 'sk-live-BRAVO-0123456789abcdef', 'sk-live-CHARLIE-0123456789abcd', 'sk-live-DELTA-0123456789abcdef'];

eachDatabase('gateway channels', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  let admin: StaffClient;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
    admin = await s.staff('ops', 'admin');
  });
  after(async () => {
    // Key secrecy over the whole run: no response except G10 and no log line carries a key.
    const all = s.everything().split('\n');
    for (const k of KEYS) assert.ok(!all.some((l) => l.includes(k)), `key ${k.slice(0, 12)} leaked`);
    await s.close();
  });

  const base = { type: 1, name: 'openai-main', models: 'gpt-4o,gpt-4o-mini', group: 'default,vip', priority: 5, weight: 3 };

  test('G02 single creates one channel with its abilities; the key is sealed at rest', async () => {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { ...base, key: KEYS[0] } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.count, 1);
    const id = r.json.data.ids[0];
    const raw = await s.ctx.db.selectFrom('channels').select('key').where('id', '=', id).executeTakeFirstOrThrow();
    assert.ok(raw.key.startsWith('v1.') && !raw.key.includes(KEYS[0]!));
    const g = await admin.get(`/api/channel/${id}`);
    assert.equal(g.json.data.key, '');
    assert.equal(g.json.data.name, 'openai-main');
    assert.equal(g.json.data.status, 1);
    await assertAbilitiesConsistent(s);
    assert.equal(Number((await s.ctx.db.selectFrom('abilities').select((eb) => eb.fn.countAll().as('n')).where('channel_id', '=', id).executeTakeFirst())!.n), 4);
  });

  test('G02 batch creates one channel per line; multi_to_single one multi-key channel', async () => {
    const b = await root.post('/api/channel/', { mode: 'batch', batch_add_set_key_prefix_2_name: true, channel: { ...base, name: 'batch', tag: 'bt', key: `${KEYS[1]}\n\n${KEYS[2]}\n` } });
    assert.equal(b.json.data.count, 2, b.text);
    const names = await Promise.all(b.json.data.ids.map(async (id: number) => (await admin.get(`/api/channel/${id}`)).json.data.name));
    assert.deepEqual(names.sort(), ['batch sk-live-', 'batch sk-live-']);
    const m = await root.post('/api/channel/', { mode: 'multi_to_single', multi_key_mode: 'polling', channel: { ...base, name: 'multi', key: ` ${KEYS[0]} \n${KEYS[3]}` } });
    const got = (await admin.get(`/api/channel/${m.json.data.ids[0]}`)).json.data;
    assert.equal(got.channel_info.is_multi_key, true);
    assert.equal(got.channel_info.multi_key_size, 2);
    assert.equal(got.channel_info.multi_key_mode, 'polling');
    await assertAbilitiesConsistent(s);
  });

  test('G02 bad input: unknown mode, missing key, bad JSON field, wrong types, malformed JSON', async () => {
    const before = await s.ctx.db.selectFrom('channels').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
    const cases: [unknown, number, string][] = [
      [{ mode: 'weird', channel: { key: 'x' } }, 400, 'CHANNEL_MODE_UNSUPPORTED'],
      [{ mode: 'single', channel: { name: 'n' } }, 400, 'CHANNEL_INVALID'],
      [{ mode: 'single', channel: { key: 'x', setting: '{not json' } }, 400, 'CHANNEL_INVALID'],
      [{ mode: 'single', channel: { key: 'x', type: 99 } }, 400, 'CHANNEL_INVALID'],
      [{ mode: 'single', channel: { key: 'x', type: 41 } }, 400, 'CHANNEL_INVALID'],
      [{ mode: 'single', channel: { key: 'x', priority: 'high' } }, 400, 'INVALID_PARAMETERS'],
      [{ mode: 'single' }, 400, 'INVALID_PARAMETERS'],
      ['{"mode":', 400, 'INVALID_JSON'],
    ];
    for (const [body, status, code] of cases) {
      const r = await root.post('/api/channel/', body);
      assert.equal(r.status, status, JSON.stringify(body) + r.text);
      assert.equal(r.json.code, code, JSON.stringify(body));
    }
    const after = await s.ctx.db.selectFrom('channels').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
    assert.equal(Number(after!.n), Number(before!.n));
  });

  test('G02 Idempotency-Key: same body replays the first result, different body is 409', async () => {
    const body = { mode: 'single', channel: { ...base, name: 'idem', key: KEYS[3] } };
    const h = { 'idempotency-key': 'create-idem-1' };
    const [a, b] = await Promise.all([root.post('/api/channel/', body, h), root.post('/api/channel/', body, h)]);
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(a.json.data, b.json.data);
    const rows = await s.ctx.db.selectFrom('channels').select('id').where('name', '=', 'idem').execute();
    assert.equal(rows.length, 1);
    const c = await root.post('/api/channel/', { ...body, channel: { ...body.channel, name: 'other' } }, h);
    assert.equal(c.status, 409);
    assert.equal(c.json.code, 'IDEMPOTENCY_KEY_REUSED');
    const d = await root.post('/api/channel/', body, { 'idempotency-key': 'create-idem-2' });
    assert.notDeepEqual(d.json.data.ids, a.json.data.ids);
    // The same fields in another order and spacing are the same body.
    const reordered = `{ "channel": ${JSON.stringify(Object.fromEntries(Object.entries(body.channel).reverse()))}, "mode": "single" }`;
    const e = await root.post('/api/channel/', reordered, h);
    assert.equal(e.status, 200, e.text);
    assert.deepEqual(e.json.data, a.json.data);
    // Expired keys of every identity and operation go with the next keyed request.
    await s.ctx.db.insertInto('idempotency_keys').values({ actor_id: 999, operation: 'G14', key: 'expired', body_hash: 'x', response: null, created_at: 1 }).execute();
    await root.post('/api/channel/', body, { 'idempotency-key': 'create-idem-3' });
    assert.deepEqual(await s.ctx.db.selectFrom('idempotency_keys').select('key').where('key', '=', 'expired').execute(), []);
  });

  test('groups are stored trimmed and without repeats (G02, G03, G29), so the group filter finds every channel serving a group', async () => {
    const id = (await root.post('/api/channel/', { mode: 'single', channel: { ...base, name: 'spaced', key: 'sk-spaced', group: ' g1 , g2,,g2 ', tag: 'spaced' } })).json.data.ids[0];
    const stored = async () => (await s.ctx.db.selectFrom('channels').select('group').where('id', '=', id).executeTakeFirstOrThrow()).group;
    assert.equal(await stored(), 'g1,g2');
    const found = async (group: string) => (await root.get(`/api/channel/?group=${group}&page_size=100`)).json.data.items.some((c: any) => c.id === id);
    assert.ok(await found('g2'));
    await root.put('/api/channel/', { id, group: 'vip , g3' });
    assert.equal(await stored(), 'vip,g3');
    assert.ok(await found('g3'));
    await root.put('/api/channel/', { id, group: ' , ' });
    assert.equal(await stored(), 'default');
    await root.put('/api/channel/tag', { tag: 'spaced', groups: 'g4 ,g5' });
    assert.equal(await stored(), 'g4,g5');
    assert.ok(await found('g5'));
    await assertAbilitiesConsistent(s);
    assert.equal((await root.request('DELETE', `/api/channel/${id}`)).status, 200);
  });

  test('G01 list: paging in SQL, filters, sorting, type_counts, tag mode', async () => {
    await root.post('/api/channel/', { mode: 'batch', channel: { type: 14, name: 'claude', models: 'claude-3', group: 'default', tag: 'anth', key: 'k1\nk2\nk3' } });
    const all = (await admin.get('/api/channel/?p=1&page_size=100')).json.data;
    assert.equal(all.items.length, all.total);
    assert.ok(all.items.every((c: any) => c.key === ''));
    const page = (await admin.get('/api/channel/?p=2&page_size=2&id_sort=true')).json.data;
    assert.equal(page.page, 2);
    assert.equal(page.page_size, 2);
    assert.equal(page.items.length, 2);
    const ids = all.items.map((c: any) => c.id).sort((x: number, y: number) => y - x);
    assert.deepEqual(page.items.map((c: any) => c.id), ids.slice(2, 4));
    const typed = (await admin.get('/api/channel/?type=14&page_size=100')).json.data;
    assert.equal(typed.total, 3);
    assert.equal(typed.type_counts['14'], 3);
    assert.equal(typed.type_counts['1'], all.total - 3);
    const byName = (await admin.get('/api/channel/?sort_by=name&sort_order=asc&page_size=100')).json.data.items.map((c: any) => c.name);
    assert.deepEqual(byName, [...byName].sort());
    const vip = (await admin.get('/api/channel/?group=vip&page_size=100')).json.data;
    assert.ok(vip.items.every((c: any) => c.group.split(',').includes('vip')) && vip.total > 0);
    await root.post('/api/channel/', { mode: 'single', channel: { type: 8, name: 'under', models: 'x', group: 'free_tier,b%c', key: 'k-under' } });
    // Like every other list filter, the group matches ignoring ASCII case on both databases.
    for (const g of ['free_tier', 'b%25c', 'FREE_Tier', 'B%25C']) {
      const r = (await admin.get(`/api/channel/?group=${g}`)).json.data;
      assert.deepEqual(r.items.map((c: any) => c.name), ['under'], g);
    }
    assert.equal((await admin.get('/api/channel/?group=free%5Ftie')).json.data.total, 0);
    assert.equal((await admin.get('/api/channel/?group=freextier')).json.data.total, 0);
    await root.delete(`/api/channel/${(await admin.get('/api/channel/search?keyword=under')).json.data.items[0].id}`);
    const tags = (await admin.get('/api/channel/?tag_mode=true&page_size=1')).json.data;
    assert.equal(tags.total, 2);
    assert.ok(tags.items.every((c: any) => c.tag === 'anth'));
    assert.equal((await admin.get('/api/channel/?page_size=1000')).json.data.page_size, 100);
    assert.equal((await admin.get('/api/channel/?p=abc')).status, 400);
  });

  test('G27 search: keyword, model, pagination fields; keys are not searchable', async () => {
    const r = (await admin.get('/api/channel/search?keyword=CLAUDE&page_size=2')).json.data;
    assert.equal(r.total, 3);
    assert.equal(r.items.length, 2);
    assert.equal(r.page, 1);
    const p2 = (await admin.get('/api/channel/search?keyword=claude&page_size=2&p=2')).json.data;
    assert.equal(p2.items.length, 1);
    assert.equal((await admin.get('/api/channel/search?model=gpt-4o-mini&page_size=100')).json.data.items.every((c: any) => c.models.includes('gpt-4o-mini')), true);
    assert.equal((await admin.get(`/api/channel/search?keyword=${KEYS[0]}`)).json.data.total, 0);
    assert.equal((await admin.get('/api/channel/search?keyword=%25')).json.data.total, 0);
  });

  test('G05/G04 unknown ids answer 404, malformed ids 400', async () => {
    assert.equal((await admin.get('/api/channel/999999')).json.code, 'CHANNEL_NOT_FOUND');
    assert.equal((await admin.get('/api/channel/abc')).status, 400);
    assert.equal((await root.delete('/api/channel/999999')).status, 404);
  });

  test('G03 update: keeps key when empty, replace/append keys, changed_fields, sensitive split', async () => {
    const id = (await root.post('/api/channel/', { mode: 'multi_to_single', channel: { ...base, name: 'upd', key: 'ka\nkb' } })).json.data.ids[0];
    const plain = await admin.put('/api/channel/', { id, name: 'upd2', models: 'm1', key: '', created_time: 1, balance: 9 });
    assert.equal(plain.status, 200, plain.text);
    assert.deepEqual(plain.json.data.changed_fields.sort(), ['models', 'name']);
    assert.equal(plain.json.data.key, '');
    const sens = await admin.put('/api/channel/', { id, base_url: 'https://x.example' });
    assert.equal(sens.status, 403);
    assert.equal(sens.json.code, 'GW_FORBIDDEN');
    const app = await root.put('/api/channel/', { id, key: 'kb\nkc', key_mode: 'append' });
    assert.deepEqual(app.json.data.changed_fields.includes('key'), true);
    assert.equal(app.json.data.channel_info.multi_key_size, 3);
    const rep = await root.put('/api/channel/', { id, key: 'kz', key_mode: 'replace' });
    assert.equal(rep.json.data.channel_info.multi_key_size, 1);
    const bad = await root.put('/api/channel/', { id, status: 2 });
    assert.equal(bad.status, 400);
    assert.equal((await root.put('/api/channel/', { id: 999999, name: 'x' })).status, 404);
    const unknown = await admin.put('/api/channel/', { id, surprise: 1 });
    assert.equal(unknown.json.code, 'GW_FORBIDDEN');
    const unknownRoot = await root.put('/api/channel/', { id, surprise: 1, name: 'upd3' });
    assert.equal(unknownRoot.status, 200, unknownRoot.text);
    assert.deepEqual(unknownRoot.json.data.changed_fields, ['name']);
    assert.equal((await root.put('/api/channel/', { id, model_mapping: '[1]' })).json.code, 'CHANNEL_INVALID');
    await assertAbilitiesConsistent(s);
  });

  test('G11/G28 status: 1 or 2 only, abilities follow, changed flags', async () => {
    const id = (await admin.get('/api/channel/?page_size=1&id_sort=true')).json.data.items[0].id;
    const r = await admin.post(`/api/channel/${id}/status`, { status: 2 });
    assert.deepEqual(r.json.data, { id, status: 2, changed: true });
    assert.equal((await admin.post(`/api/channel/${id}/status`, { status: 2 })).json.data.changed, false);
    assert.equal((await admin.post(`/api/channel/${id}/status`, { status: 3 })).json.code, 'CHANNEL_STATUS_INVALID');
    assert.equal((await admin.post('/api/channel/999999/status', { status: 1 })).status, 404);
    await assertAbilitiesConsistent(s);
    const enabledModels = (await admin.get('/api/channel/models_enabled')).json.data;
    const allModels = (await admin.get('/api/channel/models')).json.data;
    assert.ok(allModels.length >= enabledModels.length);
    const b = await admin.post('/api/channel/status/batch', { ids: [id, 999999], status: 1 });
    assert.deepEqual(b.json.data, { status: 1, count: 1, total: 2 });
    await assertAbilitiesConsistent(s);
  });

  test('G14 copy (with Idempotency-Key), G12 batch delete, G15 delete disabled', async () => {
    const src = (await admin.get('/api/channel/search?keyword=openai-main')).json.data.items[0];
    const h = { 'idempotency-key': 'copy-1' };
    const c1 = await root.post(`/api/channel/copy/${src.id}?suffix=_c`, undefined, h);
    const c2 = await root.post(`/api/channel/copy/${src.id}?suffix=_c`, undefined, h);
    assert.equal(c1.json.data.name, 'openai-main_c');
    assert.deepEqual(c1.json.data, c2.json.data);
    assert.equal((await root.post('/api/channel/copy/999999')).status, 404);
    await assertAbilitiesConsistent(s);
    await admin.post(`/api/channel/${c1.json.data.id}/status`, { status: 2 });
    const del = await root.delete('/api/channel/disabled');
    assert.ok(del.json.data >= 1);
    assert.equal((await admin.get(`/api/channel/${c1.json.data.id}`)).status, 404);
    assert.equal((await root.post('/api/channel/batch', { ids: [] })).json.code, 'CHANNEL_IDS_REQUIRED');
    const ids = (await admin.get('/api/channel/search?keyword=claude')).json.data.items.map((c: any) => c.id);
    assert.equal((await root.post('/api/channel/batch', { ids })).json.data, 3);
    const one = await root.delete(`/api/channel/${src.id}`);
    assert.deepEqual(one.json.data, { id: src.id, name: 'openai-main' });
    await assertAbilitiesConsistent(s);
  });

  test('G26 retry settings and the audit log records writes without key values', async () => {
    assert.deepEqual((await admin.get('/api/channel/ops')).json.data, { retry_times: 2 });
    const rows = await s.ctx.db.selectFrom('gateway_audit').selectAll().execute();
    const ops = new Set(rows.map((r) => r.operation));
    for (const op of ['G02', 'G03', 'G04', 'G11', 'G12', 'G14', 'G15', 'G28']) assert.ok(ops.has(op), op);
    const text = JSON.stringify(rows);
    for (const k of [...KEYS, 'kb\nkc']) assert.ok(!text.includes(k));
  });
});
