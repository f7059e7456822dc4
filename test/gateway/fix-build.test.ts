import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { ensureRoutingIndex } from '../../src/gateway/channels/store.js';
import { assertAbilitiesConsistent } from './consistency.js';

/**
 * G18 on an empty abilities table (a first build after an import) takes the bulk path: on SQLite the
 * routing index is dropped for the build and created again at the end. Concurrent writes must still leave
 * the index consistent, and the routing index must exist afterwards.
 */
eachDatabase('gateway G18 build from an empty index', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('root', 'root');
  });
  after(async () => s.close());

  async function routingIndexExists() {
    const q = {
      sqlite: sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'index' and name = 'abilities_group_model_idx'`,
      postgres: sql<{ n: number }>`select count(*)::int as n from pg_indexes where indexname = 'abilities_group_model_idx' and schemaname = current_schema()`,
      // One row per column of the index.
      mysql: sql<{ n: number }>`select count(distinct index_name) as n from information_schema.statistics
        where table_schema = database() and table_name = 'abilities' and index_name = 'abilities_group_model_idx'`,
    }[v.name];
    return Number((await q.execute(s.ctx.db)).rows[0]!.n) === 1;
  }

  test('builds every row, with concurrent creates, updates and deletes, and keeps the routing index', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `sk-build-${i}`).join('\n');
    const created = await root.post('/api/channel/', { mode: 'batch', channel: { type: 1, name: 'bulk', models: 'a,b,c', group: 'default,vip', tag: 't', key: keys } });
    assert.equal(created.status, 200, created.text);
    const ids = created.json.data.ids as number[];
    await s.ctx.db.deleteFrom('abilities').execute();
    const [fix, ...writes] = await Promise.all([
      root.post('/api/channel/fix'),
      root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'during', models: 'x,y', group: 'default', key: 'sk-during' } }),
      root.put('/api/channel/', { id: ids[0], models: 'p,q,r,s' }),
      root.delete(`/api/channel/${ids[1]}`),
      root.post('/api/channel/batch/tag', { ids: ids.slice(2, 6), tag: 'moved' }),
    ]);
    assert.equal(fix.status, 200, fix.text);
    assert.equal(fix.json.data.fails, 0);
    for (const w of writes) assert.equal(w.status, 200, w.text);
    await assertAbilitiesConsistent(s);
    assert.ok(await routingIndexExists());
    const n = Number((await s.ctx.db.selectFrom('abilities').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    assert.ok(n >= 39 * 6, `${n} ability rows`);
  });

  test('a routing index lost by a process that died mid-build is created again by ensureRoutingIndex (run at start)', async () => {
    const drop = s.ctx.db.schema.dropIndex('abilities_group_model_idx');
    await (v.name === 'mysql' ? drop.on('abilities') : drop).execute();
    assert.equal(await routingIndexExists(), false);
    await ensureRoutingIndex(s.ctx.db);
    assert.ok(await routingIndexExists());
    // A repair over a built index keeps it.
    assert.equal((await root.post('/api/channel/fix')).status, 200);
    assert.ok(await routingIndexExists());
    await assertAbilitiesConsistent(s);
  });
});
