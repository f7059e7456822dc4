import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { applyFilter } from '../../src/gateway/channels/store.js';
import { keywordIndexQuery, keywordWindow } from '../../src/gateway/channels/keyword.js';
import { TRIGRAM_PENDING_LIST_KB } from '../../src/gateway/migrations/index.js';

/**
 * G27 keyword search runs through a trigram index (SQLite FTS5, PostgreSQL pg_trgm). Its results must stay
 * exactly those of the plain scan (case-insensitive substring of name, base URL or tag, or the id) after
 * every kind of channel write. The oracle recomputes the scan in JavaScript from the channels table.
 */
/** A channel row written straight into the table (around the API). */
const RAW_CHANNEL = { type: 1, key: 'sealed', status: 1, weight: 0, created_time: 0, base_url: '', models: 'm1', group: 'default', priority: 0, channel_info: '{}', other_info: '', settings: '', other: '' };

eachDatabase('gateway keyword search index', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
  });
  after(async () => s.close());

  async function expected(keyword: string): Promise<number[]> {
    const kw = keyword.toLowerCase();
    const rows = await s.ctx.db.selectFrom('channels').select(['id', 'name', 'base_url', 'tag']).execute();
    return rows
      .filter((r) => String(r.id) === keyword || [r.name, r.base_url, r.tag ?? ''].some((t) => t.toLowerCase().includes(kw)))
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
  }

  async function found(keyword: string): Promise<number[]> {
    const r = await root.get(`/api/channel/search?keyword=${encodeURIComponent(keyword)}&page_size=100`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.total, r.json.data.items.length, `total of ${keyword}`);
    return r.json.data.items.map((c: any) => Number(c.id)).sort((a: number, b: number) => a - b);
  }

  async function assertSearches(keywords: string[]) {
    for (const kw of keywords) assert.deepEqual(await found(kw), await expected(kw), `keyword ${JSON.stringify(kw)}`);
    if (v.name === 'sqlite') await sql`insert into channels_fts(channels_fts) values ('integrity-check')`.execute(s.ctx.db);
  }

  const KEYWORDS = [
    'Alpha', 'alpha-one', 'ALPHA', 'beta', 'up7.example', 'EXAMPLE.COM', 'team-red', 'red', 'blue', 'zz', 'a', 'x"y', '50%', 'a_b', 'renamed', 'ghost', 'cafe',
    'x"y 50', '"y 5', '"', '" 5', '50% a', '% a_', 'a_b%', '_b', 'Über-Str', 'straße', 'ße c', 'ß', 'é-😀', '😀😀x', 'aaaaaa', 'alpha-one-', 'ha-t', '424', '4242', '-4242',
  ];

  test('after creates, batch creates and copies', async () => {
    const c = (channel: object) => root.post('/api/channel/', { mode: 'single', channel: { type: 1, models: 'm1', key: 'sk-search-test', ...channel } });
    assert.equal((await c({ name: 'alpha-one', base_url: 'https://up7.example.com', tag: 'team-red' })).status, 200);
    await c({ name: 'Alpha-Two', tag: 'team-blue' });
    await c({ name: 'beta x"y 50% a_b' });
    await c({ name: 'CAFE-zz', base_url: 'https://cafe.example.com' });
    await c({ name: 'Über-Straße café-😀😀x', tag: 'aaaaaaa' });
    await c({ name: 'n-4242', base_url: 'https://h4242.example' });
    await root.post('/api/channel/', { mode: 'batch', channel: { type: 1, models: 'm1', name: 'ghost', tag: 'Red-Team', key: 'sk-a\nsk-b' } });
    const id = (await found('alpha-one'))[0]!;
    assert.equal((await root.post(`/api/channel/copy/${id}?suffix=-copy`)).status, 200);
    await assertSearches([...KEYWORDS, String(id), 'alpha-one-copy']);
  });

  test('after updates (G03), tag writes (G13, G29) and deletes (G04, G12)', async () => {
    const [a] = await found('alpha-one');
    const upd = await root.put('/api/channel/', { id: a, name: 'renamed-one', base_url: 'https://other.example.org', tag: 'Team-Green' });
    assert.equal(upd.status, 200, upd.text);
    assert.deepEqual(await found('alpha-one'), await expected('alpha-one'));
    assert.ok((await found('renamed')).includes(a!));
    assert.ok(!(await found('up7.example')).includes(a!));
    const ghosts = await found('ghost');
    assert.equal((await root.post('/api/channel/batch/tag', { ids: ghosts, tag: 'team-blue' })).status, 200);
    assert.equal((await root.put('/api/channel/tag', { tag: 'team-blue', new_tag: 'team-purple' })).status, 200);
    await assertSearches([...KEYWORDS, 'purple', 'team-blue', 'green']);
    assert.equal((await root.delete(`/api/channel/${a}`)).status, 200);
    assert.equal((await root.post('/api/channel/batch', { ids: ghosts.slice(0, 1) })).status, 200);
    await assertSearches([...KEYWORDS, 'purple', 'renamed', 'ghost']);
    assert.deepEqual(await found('renamed'), []);
  });

  test('SQLite: a keyword of 3+ characters is looked up through the FTS index', { skip: v.name !== 'sqlite' }, async () => {
    const plan = async (keyword: string) => {
      const f = { keyword, keywordMatch: await keywordIndexQuery(s.ctx.db, keyword) };
      const q = applyFilter(s.ctx.db, s.ctx.db.selectFrom('channels'), f, true).select('id').orderBy('priority', 'desc').limit(100).compile();
      const r = await s.ctx.db.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
      return r.rows.map((x) => x.detail).join('\n');
    };
    assert.match(await plan('alpha'), /channels_fts VIRTUAL TABLE/);
    assert.doesNotMatch(await plan('al'), /channels_fts/);
  });

  test('SQLite: the index is asked for the rarest four characters of a longer keyword', { skip: v.name !== 'sqlite' }, async () => {
    const db = s.ctx.db;
    assert.equal(await keywordIndexQuery(db, 'ab'), undefined);
    assert.equal(await keywordIndexQuery(db, 'a"b'), '"a""b"');
    assert.equal(await keywordIndexQuery(db, 'a"bc'), '"a""bc"');
    for (let i = 0; i < 6; i++) {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, models: 'm1', key: 'sk-rare', name: `commonprefix-${i}q` } });
      assert.equal(r.status, 200, r.text);
    }
    // Every trigram of "commonprefix-" is in six channels, "x-3" and "-3q" in one.
    assert.equal(await keywordIndexQuery(db, 'commonprefix-3q'), '"x-3q"');
    assert.deepEqual(await found('commonprefix-3q'), await expected('commonprefix-3q'));
    assert.equal((await found('commonprefix-3q')).length, 1);
    // A trigram no channel has makes its window the choice: nothing to read.
    assert.equal(await keywordIndexQuery(db, 'zqjcommonprefix'), '"zqjc"');
    assert.deepEqual(await found('zqjcommonprefix'), []);
  });

  test('SQLite: a keyword in a large part of the channels is checked on every row instead', { skip: v.name !== 'sqlite' }, async () => {
    for (let i = 0; i < 40; i++) {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1 + (i % 2), models: 'm1', key: 'sk-broad', name: `everywhere-${i}`, priority: i % 3 } });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(await keywordIndexQuery(s.ctx.db, 'everywhere'), undefined);
    assert.equal(await keywordIndexQuery(s.ctx.db, 'everywhere-7'), '"re-7"');
    for (const keyword of ['everywhere', 'EVERYWHERE-1', 'where-3']) {
      const want = await expected(keyword);
      assert.deepEqual(await found(keyword), want, keyword);
      for (const sort of ['priority', 'id', 'name', 'balance']) {
        const seen: number[] = [];
        for (let p = 1; p <= Math.ceil(want.length / 7) + 1; p++) {
          const r = await root.get(`/api/channel/search?keyword=${keyword}&page_size=7&p=${p}&sort_by=${sort}`);
          assert.equal(r.json.data.total, want.length);
          seen.push(...r.json.data.items.map((c: any) => Number(c.id)));
        }
        assert.deepEqual(seen.sort((a, b) => a - b), want, `${keyword} by ${sort}`);
      }
    }
  });

  test('searches in the default order (priority desc, id desc) page exactly as the scan orders, after priority changes and deletes', async () => {
    // Fillers keep "zorder" a minority of the channels, so SQLite looks it up in the trigram index,
    // whose rowids follow this order (migration 0008).
    await s.ctx.db.insertInto('channels').values(Array.from({ length: 120 }, (_, i) => ({ ...RAW_CHANNEL, name: `filler-${i}`, priority: i % 4 })) as never).execute();
    const priorities = [3, -5, 0, 0, 1_000_000_000, -1_000_000_000, 3, 7, 0, -5, 2, 2, 2, 9, -1];
    for (const [i, priority] of priorities.entries()) {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, models: 'm1', key: 'sk-order', name: `zorder-${i}`, priority } });
      assert.equal(r.status, 200, r.text);
    }
    if (v.name === 'sqlite') assert.ok(await keywordIndexQuery(s.ctx.db, 'zorder'), 'zorder goes through the index');
    const inOrder = async () =>
      (await s.ctx.db.selectFrom('channels').select('id').where('name', 'like', 'zorder-%').orderBy('priority', 'desc').orderBy('id', 'desc').execute()).map((r) => Number(r.id));
    const pages = async (size: number) => {
      const seen: number[] = [];
      for (let p = 1; p <= Math.ceil(priorities.length / size) + 1; p++) {
        const r = await root.get(`/api/channel/search?keyword=zorder&page_size=${size}&p=${p}`);
        assert.equal(r.status, 200, r.text);
        seen.push(...r.json.data.items.map((c: any) => Number(c.id)));
      }
      return seen;
    };
    assert.deepEqual(await pages(4), await inOrder());
    const ids = await inOrder();
    assert.equal((await root.put('/api/channel/', { id: ids.at(-1), priority: 100 })).status, 200);
    assert.equal((await root.put('/api/channel/', { id: ids[0], priority: -100 })).status, 200);
    assert.equal((await root.delete(`/api/channel/${ids[3]}`)).status, 200);
    assert.deepEqual(await pages(3), await inOrder());
    assert.deepEqual(await pages(100), await inOrder());
    if (v.name !== 'sqlite') return;
    // A priority the index key cannot hold (written around the API, as an import might): the index's
    // order is then wrong for it, and the search sorts its matches instead.
    // Both clamp to the same key priority, where the larger id would come first: the wrong way round.
    const [low, high] = [ids[5]!, ids[6]!].sort((a, b) => a - b);
    await sql`update channels set priority = 6000000000 where id = ${low}`.execute(s.ctx.db);
    await sql`update channels set priority = 5000000000 where id = ${high}`.execute(s.ctx.db);
    assert.deepEqual((await inOrder()).slice(0, 2), [low, high]);
    // (One per page: a page's own rows are always sorted by their columns, so only which rows make a
    // page could go wrong.)
    assert.deepEqual(await pages(1), await inOrder());
    await sql`update channels set priority = 1 where id in (${ids[5]}, ${ids[6]})`.execute(s.ctx.db);
    assert.deepEqual(await pages(4), await inOrder());
    await sql`insert into channels_fts(channels_fts) values ('integrity-check')`.execute(s.ctx.db);
  });

  test('SQLite: a channel id above 2^32 - 1 is refused (the index key keeps ids in 32 bits)', { skip: v.name !== 'sqlite' }, async () => {
    const insert = s.ctx.db.insertInto('channels').values({ ...RAW_CHANNEL, id: 4294967296, name: 'too-big' } as never);
    await assert.rejects(insert.execute(), /channel ids above 4294967295 are not supported/);
    assert.equal((await s.ctx.db.selectFrom('channels').select('id').where('name', '=', 'too-big').execute()).length, 0);
  });

  test('PostgreSQL: a keyword with few matches is narrowed by its rarest four characters, its matches read and then sorted', { skip: v.name !== 'postgres' }, async () => {
    // A server of its own: the sample the choice is made from is kept for minutes per database.
    const fresh = await startGateway(v);
    try {
      const admin = await fresh.staff('root', 'root');
      await fresh.ctx.db.insertInto('channels').values(Array.from({ length: 60 }, (_, i) => ({ ...RAW_CHANNEL, name: `commonprefix-${i}q`, priority: i % 4, balance: i % 7 })) as never).execute();
      const db = fresh.ctx.db;
      assert.equal(await keywordWindow(db, 'ab', 100, true), undefined);
      assert.equal(await keywordWindow(db, 'a%c', 100, true), 'a%c');
      // "x-3q" is in one name; every window of "commonprefix-" in all sixty.
      assert.equal(await keywordWindow(db, 'commonprefix-3q', 100, true), 'x-3q');
      // Sixty matches and one row wanted: walking an indexed order finds it sooner; any other order sorts anyway.
      assert.equal(await keywordWindow(db, 'commonprefix', 1, true), undefined);
      assert.equal(await keywordWindow(db, 'commonprefix', 1, false), 'comm');
      const all = (await db.selectFrom('channels').select('id').execute()).map((r) => Number(r.id)).sort((a, b) => a - b);
      const one = await admin.get('/api/channel/search?keyword=commonprefix-3Q&page_size=100');
      assert.deepEqual(one.json.data.items.map((c: any) => c.name), ['commonprefix-3q']);
      // Page 1 of 7 walks the order, the later pages read every match (63+ rows wanted): together all of them, once.
      for (const sort of ['priority', 'id', 'name', 'balance']) {
        const seen: number[] = [];
        for (let p = 1; p <= 10; p++) {
          const r = await admin.get(`/api/channel/search?keyword=COMMONprefix&page_size=7&p=${p}&sort_by=${sort}`);
          assert.equal(r.json.data.total, 60);
          seen.push(...r.json.data.items.map((c: any) => Number(c.id)));
        }
        assert.deepEqual(seen.sort((a, b) => a - b), all, sort);
      }
    } finally {
      await fresh.close();
    }
  });

  test('PostgreSQL: the trigram indexes exist when pg_trgm is available', { skip: v.name !== 'postgres' }, async () => {
    const ext = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(s.ctx.db);
    const idx = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where tablename = 'channels' and indexname like '%_trgm' and schemaname = current_schema()`.execute(s.ctx.db);
    assert.equal(idx.rows[0]!.n, ext.rows[0]!.n === 1 ? 3 : 0);
  });

  test('PostgreSQL: the trigram indexes keep short pending lists (migration 0009)', { skip: v.name !== 'postgres' }, async () => {
    const rows = await sql<{ relname: string; reloptions: string[] | null }>`select relname, reloptions from pg_class
      where relname like 'channels_%_trgm' and relnamespace = current_schema()::regnamespace order by relname`.execute(s.ctx.db);
    const ext = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'pg_trgm'`.execute(s.ctx.db);
    assert.equal(rows.rows.length, ext.rows[0]!.n === 1 ? 3 : 0);
    for (const r of rows.rows) assert.deepEqual(r.reloptions, [`gin_pending_list_limit=${TRIGRAM_PENDING_LIST_KB}`], r.relname);
  });
});
