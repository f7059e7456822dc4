import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { countChannels, getChannel, pageQuery, SORTABLE, type ListFilter } from '../../src/gateway/channels/store.js';
import { view } from '../../src/gateway/channels/service.js';

/**
 * G01 and G27 build their items as JSON text (on SQLite the database writes each row's JSON); every item
 * must equal view() of the same stored row, for odd stored values too.
 */
eachDatabase('gateway list items equal view(row)', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  const ids: number[] = [];
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
    const add = async (channel: object, mode = 'single') => {
      const r = await root.post('/api/channel/', { mode, channel: { type: 1, models: 'm1', key: 'sk-items-test', ...channel } });
      assert.equal(r.status, 200, r.text);
      ids.push(...r.json.data.ids);
      return r.json.data.ids[0] as number;
    };
    const set = (id: number, values: Record<string, unknown>) => s.ctx.db.updateTable('channels').set(values as never).where('id', '=', id).execute();
    await add({ name: 'plain' });
    await set(await add({ name: 'float', tag: 'tag-a', remark: 'r' }), { balance: 12.5, used_quota: 2 ** 53 - 1, priority: -3 });
    await set(await add({ name: 'whole balance', tag: 'tag-a' }), { balance: 5 });
    await set(await add({ name: 'tiny balance' }), { balance: 0.1 + 0.2 });
    await set(await add({ name: 'third' }), { balance: 1 / 3, weight: 7 });
    await set(await add({ name: 'huge' }), { balance: 1e20 });
    await set(await add({ name: 'negative zero' }), { balance: -0.0 });
    await add({ name: '名前-é-😀 "quoted" back\\slash\ttab\u0001ctl\u2028', base_url: 'https://ü.example.com', tag: 'ünï' });
    await add({ name: 'nulls', openai_organization: 'org', test_model: 'gpt', other: 'o', model_mapping: '{"a":"b"}', setting: '{"s":1}', param_override: '{"p":2}', header_override: '{"h":"v"}', other_info: '{"i":3}' });
    const mk = await add({ name: 'multi', tag: 'tag-b', key: 'sk-one\nsk-two\nsk-three' }, 'multi_to_single');
    await set(mk, {
      channel_info: JSON.stringify({
        is_multi_key: true, multi_key_size: 3, multi_key_status_list: { 1: 3 }, multi_key_disabled_reason: { 1: 'quota' },
        multi_key_disabled_time: { 1: 1700000000 }, multi_key_polling_index: 2, multi_key_mode: 'polling', extra: [1, 'x'],
      }),
    });
    for (const [i, info] of ['not json', '5', '[1,2]', 'null', '"text"', '', '{is_multi_key: 1}', '{"is_multi_key":"yes","multi_key_size":"x","multi_key_status_list":null}', '{"a":1,"a":2}'].entries()) {
      await set(await add({ name: `odd info ${i}`, tag: i % 2 ? 'tag-b' : null }), { channel_info: info });
    }
  });
  after(async () => s.close());

  async function assertItems(path: string, expectCount?: number) {
    const r = await root.get(path);
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    const items = r.json.data.items as Record<string, unknown>[];
    if (expectCount !== undefined) assert.equal(items.length, expectCount, path);
    for (const item of items) {
      const row = await getChannel(s.ctx.db, Number(item.id));
      assert.ok(row, `row ${item.id}`);
      assert.deepEqual(item, JSON.parse(JSON.stringify(view(row!))), `${path} item ${item.id}`);
      assert.equal(item.key, '');
    }
    return r;
  }

  test('G01 pages, sorts and tag mode', async () => {
    const r = await assertItems('/api/channel/?page_size=100', ids.length);
    // A whole balance is written as JavaScript writes it (5, not 5.0); PostgreSQL's JSON puts spaces around ':'.
    assert.match(r.text, /"name" ?: ?"whole balance"[^}]*"balance" ?: ?5,/);
    assert.equal(r.json.data.total, ids.length);
    assert.equal(r.json.success, true);
    await assertItems('/api/channel/?p=2&page_size=5', 5);
    await assertItems('/api/channel/?sort_by=balance&sort_order=asc&page_size=7', 7);
    await assertItems('/api/channel/?id_sort=true&page_size=100&status=enabled');
    await assertItems('/api/channel/?p=99&page_size=100', 0);
    const tags = await assertItems('/api/channel/?tag_mode=true&page_size=100');
    assert.ok(tags.json.data.items.length > 3);
    await assertItems('/api/channel/?tag_mode=true&p=9&page_size=100', 0);
  });

  test('a page counted from the end holds the same rows as counted from the start', async () => {
    const n = ids.length;
    const filters: ListFilter[] = [{}, { status: 'enabled' }, { keyword: 'info' }, { type: 1, group: 'default' }];
    for (const f of filters) {
      for (const by of SORTABLE) {
        for (const dir of ['asc', 'desc'] as const) {
          for (const [limit, offset] of [[5, 0], [5, n - 5], [4, n - 2], [3, Math.floor(n / 2)], [7, n], [7, n + 3], [100, 0], [1, n - 1]] as const) {
            // SQLite counts in the statement; the others count from the listing's total.
            const total = await countChannels(s.ctx.db, f);
            const page = async (fromEnd: boolean) =>
              (await pageQuery(s.ctx.db, f, { by, dir }, limit, offset, fromEnd, v.name === 'sqlite' ? undefined : total).select('id').execute()).map((c) => c.id);
            const [ahead, back] = [await page(false), await page(true)];
            assert.deepEqual(back, ahead, JSON.stringify({ f, by, dir, limit, offset }));
          }
        }
      }
    }
    // Through G01: the last pages are read from the end, and agree with the pages before them.
    const all = (await root.get(`/api/channel/?page_size=100&sort_by=priority`)).json.data.items.map((c: any) => c.id);
    const tail = [];
    for (let p = 1; p <= Math.ceil(n / 3); p++) tail.push(...(await assertItems(`/api/channel/?p=${p}&page_size=3&sort_by=priority`)).json.data.items.map((c: any) => c.id));
    assert.deepEqual(tail, all);
  });

  test('G27 search', async () => {
    await assertItems('/api/channel/search?keyword=balance&page_size=100', 2);
    await assertItems('/api/channel/search?keyword=odd%20info&page_size=100', 9);
    await assertItems(`/api/channel/search?keyword=${encodeURIComponent('名前')}&page_size=100`, 1);
    await assertItems('/api/channel/search?keyword=multi&tag_mode=true&page_size=100');
    await assertItems('/api/channel/search?keyword=nothing-matches', 0);
    // The model filter ignores ASCII case and takes % and _ literally.
    await assertItems('/api/channel/search?model=M1&page_size=100', ids.length);
    await assertItems('/api/channel/search?model=m%25&page_size=100', 0);
    await assertItems('/api/channel/search?model=_1&page_size=100', 0);
    await assertItems('/api/channel/search?keyword=PLAIN&model=m1', 1);
  });
});
