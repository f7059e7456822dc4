import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { assertAbilitiesConsistent } from './consistency.js';

const MK = ['sk-mk-ONE-aaaaaaaaaaaaaaaa', 'sk-mk-TWO-bbbbbbbbbbbbbbbb', 'sk-mk-THREE-cccccccccccccc'];

eachDatabase('gateway tags, abilities repair and multi-key', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  let admin: StaffClient;
  let tagged: number[];
  let mk: number;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
    admin = await s.staff('ops', 'admin');
    tagged = (await root.post('/api/channel/', { mode: 'batch', channel: { type: 1, name: 't', tag: 'blue', models: 'a,b', group: 'default', key: 'x1\nx2' } })).json.data.ids;
    await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'u', tag: 'blue', models: 'a,b,c', key: 'x3' } });
    mk = (await root.post('/api/channel/', { mode: 'multi_to_single', channel: { type: 1, name: 'mk', models: 'z', key: MK.join('\n') } })).json.data.ids[0];
  });
  after(async () => {
    const all = s.everything();
    for (const k of MK) assert.ok(!all.includes(k), 'multi-key value leaked');
    await s.close();
  });

  test('G13 batch tag sets and clears tags; abilities follow', async () => {
    const r = await admin.post('/api/channel/batch/tag', { ids: [mk], tag: 'green' });
    assert.equal(r.json.data, 1);
    assert.equal((await admin.get(`/api/channel/${mk}`)).json.data.tag, 'green');
    await assertAbilitiesConsistent(s);
    await admin.post('/api/channel/batch/tag', { ids: [mk], tag: null });
    assert.equal((await admin.get(`/api/channel/${mk}`)).json.data.tag, null);
    assert.equal((await admin.post('/api/channel/batch/tag', { ids: [], tag: 'x' })).status, 400);
    await assertAbilitiesConsistent(s);
  });

  test('G32 tag models, G30/G31 tag disable/enable, G29 tag edit', async () => {
    assert.equal((await admin.get('/api/channel/tag/models?tag=blue')).json.data, 'a,b,c');
    assert.equal((await admin.get('/api/channel/tag/models')).status, 400);
    const d = await admin.post('/api/channel/tag/disabled', { tag: 'blue' });
    assert.deepEqual(d.json.data, { tag: 'blue', count: 3 });
    assert.equal((await admin.get('/api/channel/?status=disabled&page_size=100')).json.data.total, 3);
    await assertAbilitiesConsistent(s);
    await admin.post('/api/channel/tag/enabled', { tag: 'blue' });
    await assertAbilitiesConsistent(s);
    const e = await admin.put('/api/channel/tag', { tag: 'blue', new_tag: 'navy', priority: 9, models: 'q,r', groups: 'vip' });
    assert.deepEqual(e.json.data, { tag: 'navy', count: 3 });
    const ch = (await admin.get(`/api/channel/${tagged[0]}`)).json.data;
    assert.equal(ch.tag, 'navy');
    assert.equal(ch.priority, 9);
    assert.equal(ch.models, 'q,r');
    assert.equal(ch.group, 'vip');
    await assertAbilitiesConsistent(s);
    const sens = await admin.put('/api/channel/tag', { tag: 'navy', header_override: '{"x":"y"}' });
    assert.equal(sens.json.code, 'GW_FORBIDDEN');
    assert.equal((await root.put('/api/channel/tag', { tag: 'navy', param_override: 'nope' })).json.code, 'CHANNEL_INVALID');
    assert.equal((await admin.put('/api/channel/tag', { tag: ' ' })).json.code, 'CHANNEL_TAG_REQUIRED');
  });

  test('G18 fix rebuilds a damaged index and removes orphans; a second concurrent run is refused', async () => {
    await s.ctx.db.deleteFrom('abilities').where('channel_id', '=', tagged[0]!).execute();
    await s.ctx.db.insertInto('abilities').values({ group: 'g', model: 'm', channel_id: 999999, enabled: 1, priority: 0, weight: 0, tag: null }).execute();
    await s.ctx.db.insertInto('gateway_meta').values({ key: 'fix_lock', value: String(Math.floor(Date.now() / 1000) + 60) }).execute();
    const busy = await admin.post('/api/channel/fix');
    assert.equal(busy.status, 409);
    assert.equal(busy.json.code, 'CHANNEL_FIX_RUNNING');
    await s.ctx.db.deleteFrom('gateway_meta').where('key', '=', 'fix_lock').execute();
    const [r, concurrentWrite] = await Promise.all([admin.post('/api/channel/fix'), admin.put('/api/channel/', { id: tagged[1], models: 'w1,w2' })]);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.success, 4);
    assert.equal(r.json.data.fails, 0);
    assert.equal(concurrentWrite.status, 200);
    await assertAbilitiesConsistent(s);
  });

  test('G18 with several G03 at the same moment, rounds over: every write succeeds, the index ends consistent', async () => {
    // Many abilities per channel widen the window in which a G03 holds its channel and a G18 step
    // reaches that channel's abilities (a MySQL deadlock that answered 500 before).
    const models = Array.from({ length: 200 }, (_, i) => `fx${i}`).join(',');
    const ids = (await root.post('/api/channel/', { mode: 'batch', channel: { type: 1, name: 'fixrace', models, key: 'f1\nf2\nf3\nf4' } })).json.data.ids as number[];
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (let round = 0; round < 10; round++) {
      await s.ctx.db.insertInto('abilities').values({ group: 'g', model: 'm', channel_id: 999999, enabled: 1, priority: 0, weight: 0, tag: null }).execute();
      // Spread over the repair's few tens of milliseconds, so some land on each of its steps.
      const writes = Array.from({ length: 12 }, (_, i) => pause(i * 2 + (round % 2)).then(() => admin.put('/api/channel/', { id: ids[i % ids.length], models: `${models},r${round}w${i}` })));
      const answers = await Promise.all([admin.post('/api/channel/fix'), ...writes]);
      for (const a of answers) assert.equal(a.status, 200, `round ${round}: ${a.text}`);
    }
    await assertAbilitiesConsistent(s);
    assert.equal((await root.post('/api/channel/batch', { ids })).status, 200);
  });

  test('concurrent writes of every kind leave the abilities index consistent', async () => {
    const ids = (await root.post('/api/channel/', { mode: 'batch', channel: { type: 1, name: 'race', tag: 'race', models: 'a,b', group: 'default,vip', key: 'r1\nr2\nr3\nr4\nr5\nr6' } })).json.data.ids as number[];
    const ops: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, id] of ids.entries()) {
        ops.push(admin.put('/api/channel/', { id, models: `m${round},n${i}`, priority: round }));
        ops.push(admin.post(`/api/channel/${id}/status`, { status: round % 2 ? 1 : 2 }));
      }
      ops.push(admin.post('/api/channel/batch/tag', { ids: ids.slice(0, 3), tag: `race${round}` }));
      ops.push(admin.put('/api/channel/tag', { tag: 'race', groups: `g${round}` }));
      ops.push(admin.post('/api/channel/tag/disabled', { tag: 'race' }));
    }
    ops.push(root.delete(`/api/channel/${ids[5]}`));
    ops.push(root.post('/api/channel/batch', { ids: [ids[4]] }));
    ops.push(root.delete('/api/channel/disabled'));
    ops.push(root.post(`/api/channel/copy/${ids[0]}`));
    const results = (await Promise.all(ops)) as { status: number; text: string }[];
    const errors = s.log.lines.filter((l) => l.includes('"level":50')).join('\n');
    for (const r of results) assert.ok(r.status < 500 && r.status !== 409, r.text + errors);
    await assertAbilitiesConsistent(s);
  });

  test('G21 multi-key: status, disable/enable, all, delete with re-index, last key kept', async () => {
    const post = (body: object, c = admin) => c.post('/api/channel/multi_key/manage', { channel_id: mk, ...body });
    const st = (await post({ action: 'get_key_status' })).json.data;
    assert.equal(st.total, 3);
    assert.equal(st.enabled_count, 3);
    assert.equal(st.keys[0].key_preview, 'sk-m...aaaa');
    assert.equal((await post({ action: 'disable_key', key_index: 1 })).json.success, true);
    assert.equal((await post({ action: 'disable_key', key_index: 3 })).json.code, 'CHANNEL_KEY_INDEX_OUT_OF_RANGE');
    assert.equal((await post({ action: 'get_key_status', status: 2 })).json.data.total, 1);
    assert.equal((await post({ action: 'enable_all_keys' })).json.message, 'enabled 1 keys');
    assert.equal((await post({ action: 'disable_all_keys' })).json.data.count, 3);
    assert.equal((await post({ action: 'disable_all_keys' })).json.code, 'CHANNEL_NO_KEY_TO_DISABLE');
    await post({ action: 'enable_key', key_index: 0 });
    assert.equal((await post({ action: 'delete_key', key_index: 0 })).json.code, 'GW_FORBIDDEN');
    assert.equal((await post({ action: 'delete_key', key_index: 0 }, root)).json.data.multi_key_size, 2);
    const after = (await post({ action: 'get_key_status' })).json.data;
    assert.deepEqual(after.keys.map((k: any) => [k.index, k.status]), [[0, 2], [1, 2]]);
    assert.equal((await post({ action: 'delete_disabled_keys' }, root)).json.code, 'CHANNEL_NO_DISABLED_KEY');
    await post({ action: 'delete_key', key_index: 0 }, root);
    assert.equal((await post({ action: 'delete_key', key_index: 0 }, root)).json.code, 'CHANNEL_LAST_KEY');
    assert.equal((await post({ action: 'explode' })).json.code, 'CHANNEL_ACTION_UNSUPPORTED');
    assert.equal((await admin.post('/api/channel/multi_key/manage', { channel_id: tagged[0], action: 'get_key_status' })).json.code, 'CHANNEL_NOT_MULTI_KEY');
    assert.equal((await admin.post('/api/channel/multi_key/manage', { channel_id: 999999, action: 'get_key_status' })).status, 404);
    const { open } = await import('../../src/kit/crypto/aead.js');
    const raw = await s.ctx.db.selectFrom('channels').select('key').where('id', '=', mk).executeTakeFirstOrThrow();
    assert.equal(open(s.ctx.secretKey, raw.key, 'channel.key'), MK[2]);
  });

  test('G03 on a multi-key channel: append keeps per-key states in place, no key list may end empty, an unchanged key is not a change', async () => {
    const keys = ['sk-dup-A-1111111111', 'sk-dup-B-2222222222', 'sk-dup-C-3333333333'];
    const id = (await root.post('/api/channel/', { mode: 'multi_to_single', channel: { type: 1, name: 'dup', models: 'm', key: `${keys[0]}\n${keys[0]}\n${keys[1]}` } })).json.data.ids[0];
    const post = (body: object) => root.post('/api/channel/multi_key/manage', { channel_id: id, ...body });
    assert.equal((await post({ action: 'disable_key', key_index: 2 })).json.success, true);
    const r = await root.put('/api/channel/', { id, key: `${keys[1]}\n${keys[2]}`, key_mode: 'append' });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.data.changed_fields.includes('key'));
    const st = (await post({ action: 'get_key_status' })).json.data;
    // The stored list stays as it was (its duplicate too); only the new key is added, enabled.
    assert.deepEqual(st.keys.map((k: any) => [k.index, k.status]), [[0, 1], [1, 1], [2, 2], [3, 1]]);
    for (const key of ['[]', '["", " "]']) {
      const empty = await root.put('/api/channel/', { id, key });
      assert.equal(empty.status, 400, empty.text);
      assert.equal(empty.json.code, 'CHANNEL_INVALID');
    }
    assert.equal((await post({ action: 'get_key_status' })).json.data.total, 4);
    const same = await root.put('/api/channel/', { id, key: keys[2], key_mode: 'append' });
    assert.deepEqual(same.json.data.changed_fields, []);
    const single = (await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'one', models: 'm', key: 'sk-same-key-123456' } })).json.data.ids[0];
    assert.deepEqual((await root.put('/api/channel/', { id: single, key: 'sk-same-key-123456' })).json.data.changed_fields, []);
  });

  test('G03: null for a text column that holds no NULL clears it instead of failing', async () => {
    const id = (await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'nulls', models: 'm', key: 'sk-nulls', base_url: 'https://x.example', other: 'o', other_info: '{}', settings: '{}' } })).json.data.ids[0];
    for (const field of ['base_url', 'other', 'other_info', 'settings']) {
      const r = await root.put('/api/channel/', { id, [field]: null });
      assert.equal(r.status, 200, `${field}: ${r.text}`);
      assert.equal((await root.get(`/api/channel/${id}`)).json.data[field], '', field);
    }
  });

  test('G32 picks the lowest id among tagged channels with as many models, on both databases', async () => {
    const a = (await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'tie-a', tag: 'tie', models: 'a1,a2', key: 'k' } })).json.data.ids[0];
    await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'tie-b', tag: 'tie', models: 'b1,b2', key: 'k' } });
    assert.equal((await root.get('/api/channel/tag/models?tag=tie')).json.data, 'a1,a2');
    await root.put('/api/channel/', { id: a, name: 'tie-a-renamed' });
    assert.equal((await root.get('/api/channel/tag/models?tag=tie')).json.data, 'a1,a2');
  });

  test('G29, G30 and G31 on a tag of 33,000 channels (more ids than one SQLite statement may bind) change them all', async () => {
    const db = s.ctx.db;
    const rows = Array.from({ length: 33_000 }, (_, i) => ({ type: 1, key: 'sealed', status: 1, name: `big-${i}`, weight: 0, created_time: 0, base_url: '', models: 'm', group: 'default', priority: 0, tag: 'big', channel_info: '{}', other_info: '', settings: '', other: '' }));
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('channels').values(rows.slice(i, i + 1000) as never).execute();
    });
    const r = await root.put('/api/channel/tag', { tag: 'big', priority: 3, models: 'm,n' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.count, 33_000);
    const left = await db.selectFrom('channels').select('id').where('tag', '=', 'big').where('priority', '!=', 3).execute();
    assert.equal(left.length, 0);
    await assertAbilitiesConsistent(s);
    // G30/G31 over the same tag: every channel changes, other_info keeps what it held.
    const [first] = await db.selectFrom('channels').select('id').where('tag', '=', 'big').orderBy('id').limit(1).execute();
    await db.updateTable('channels').set({ other_info: '{"keep":1}' }).where('id', '=', first!.id).execute();
    await db.updateTable('channels').set({ status: 2 }).where('name', '=', 'big-7').execute();
    const [seventh] = await db.selectFrom('channels').select('id').where('name', '=', 'big-7').execute();
    await db.updateTable('abilities').set({ enabled: 0 }).where('channel_id', '=', seventh!.id).execute();
    const off = await root.post('/api/channel/tag/disabled', { tag: 'big' });
    assert.equal(off.json.data.count, 32_999, off.text);
    const infos = await db.selectFrom('channels').select(['id', 'status', 'other_info']).where('tag', '=', 'big').execute();
    assert.ok(infos.every((r) => r.status === 2));
    const kept = JSON.parse(infos.find((r) => r.id === first!.id)!.other_info);
    assert.equal(kept.keep, 1);
    assert.equal(kept.status_reason, 'manual operation');
    await assertAbilitiesConsistent(s);
    assert.equal((await root.post('/api/channel/tag/enabled', { tag: 'big' })).json.data.count, 33_000);
    await assertAbilitiesConsistent(s);
    await db.deleteFrom('channels').where('tag', '=', 'big').execute();
    await db.deleteFrom('abilities').where('tag', '=', 'big').execute();
  });

  test('G78-G81 prefill groups: create, unique names, list by type, update, soft delete', async () => {
    const c = await admin.post('/api/prefill_group/', { name: 'fav', type: 'model', items: ['a', 'b'], description: 'd' });
    assert.equal(c.status, 200, c.text);
    assert.deepEqual(c.json.data.items, ['a', 'b']);
    assert.equal((await admin.post('/api/prefill_group/', { name: 'fav', type: 'tag' })).json.code, 'PREFILL_GROUP_NAME_TAKEN');
    assert.equal((await admin.post('/api/prefill_group/', { name: ' ', type: 'tag' })).json.code, 'PREFILL_GROUP_INVALID');
    assert.equal((await admin.post('/api/prefill_group/', { name: 'x', type: 'tag', items: '[1]' })).status, 400);
    const other = await admin.post('/api/prefill_group/', { name: 'tags', type: 'tag', items: '["t1"]' });
    assert.deepEqual((await admin.get('/api/prefill_group/?type=model')).json.data.map((g: any) => g.name), ['fav']);
    assert.equal((await admin.put('/api/prefill_group/', { id: other.json.data.id, name: 'fav', type: 'tag' })).json.code, 'PREFILL_GROUP_NAME_TAKEN');
    const u = await admin.put('/api/prefill_group/', { id: c.json.data.id, name: 'fav', type: 'model', items: ['c'] });
    assert.deepEqual(u.json.data.items, ['c']);
    assert.equal((await admin.delete(`/api/prefill_group/${c.json.data.id}`)).status, 200);
    assert.equal((await admin.delete(`/api/prefill_group/${c.json.data.id}`)).status, 404);
    assert.equal((await admin.post('/api/prefill_group/', { name: 'fav', type: 'model' })).status, 200);
    assert.equal((await admin.put('/api/prefill_group/', { id: 999999, name: 'q', type: 'model' })).status, 404);
  });
});
