import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { migrate, openDatabase } from '../../src/kit/db/index.js';
import type { GatewayDB } from '../../src/gateway/db.js';
import { gatewayMigrations } from '../../src/gateway/migrations/index.js';
import { eachDatabase, freshDatabase, tempDir } from '../helpers/services.js';

/** Upgrades of databases written by earlier versions: the data migrations bring old rows along. */
eachDatabase('gateway data migrations', (v) => {
  test('0011: groups stored before it are trimmed, without empty or repeated entries', async () => {
    const schema = freshDatabase(v, path.join(tempDir(), 'gateway.sqlite'));
    const database = await openDatabase<GatewayDB>(schema.url);
    try {
      const all = gatewayMigrations(database.dialect);
      const before = Object.fromEntries(Object.entries(all).filter(([name]) => name < '0011'));
      await migrate(database, 'gateway', before);
      const row = { type: 1, key: 'sealed', status: 1, weight: 0, created_time: 0, base_url: '', models: 'm', priority: 0, channel_info: '{}', other_info: '', settings: '', other: '' };
      const stored = [' g1 , g2', 'g1,,g2,g1', ',vip,', '', 'default', 'a b,c'];
      for (const [i, group] of stored.entries()) await database.db.insertInto('channels').values({ ...row, name: `c${i}`, group } as never).execute();
      await migrate(database, 'gateway', all);
      const groups = (await database.db.selectFrom('channels').select(['name', 'group']).orderBy('id').execute()).map((r) => r.group);
      assert.deepEqual(groups, ['g1,g2', 'g1,g2', 'vip', 'default', 'default', 'a b,c']);
    } finally {
      await database.close();
      await schema.drop();
    }
  });
});
