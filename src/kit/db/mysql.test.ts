import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { MYSQL_URL, freshMysqlDatabase } from '../../../test/helpers/services.js';
import { accountMigrations } from '../../account/migrations/index.js';
import { gatewayMigrations } from '../../gateway/migrations/index.js';
import { migrate, openDatabase } from './index.js';
import { mysqlDatabaseName } from './mysql.js';

const skip = MYSQL_URL ? false : 'TEST_MYSQL_URL not set: MySQL-only suite skipped (CI sets it)';

describe('MySQL/MariaDB databases', { skip }, () => {
  test('each service migrates a fresh database (twice: the second run applies nothing) into binary-collated InnoDB tables', async () => {
    const freshA = freshMysqlDatabase(MYSQL_URL);
    const freshG = freshMysqlDatabase(MYSQL_URL);
    const a = await openDatabase<any>(freshA.url);
    const g = await openDatabase<any>(freshG.url);
    try {
      assert.equal(a.dialect, 'mysql');
      for (let i = 0; i < 2; i++) {
        await migrate(a, 'account', accountMigrations(a.dialect));
        await migrate(g, 'gateway', gatewayMigrations(g.dialect));
      }
      for (const [d, table] of [[a, 'users'], [g, 'channels']] as const) {
        const tables = await sql<{ name: string; engine: string; collation: string }>`select table_name as name, engine, table_collation as collation
          from information_schema.tables where table_schema = database()`.execute(d.db);
        assert.ok(tables.rows.some((t) => t.name === table), table);
        for (const t of tables.rows) {
          assert.equal(t.engine, 'InnoDB', t.name);
          assert.match(t.collation, /^utf8mb4_.*bin$/, t.name);
        }
      }
      // Names that differ only in case (or a trailing space, with a NO PAD collation) are different names.
      const user = { display_name: '', role: 1, status: 1, group: 'default', auth_version: 1, created_at: 0 };
      await a.db.insertInto('users').values({ ...user, username: 'Alice', aff_code: 'a1' }).execute();
      await a.db.insertInto('users').values({ ...user, username: 'alice', aff_code: 'A1' }).execute();
      assert.deepEqual((await a.db.selectFrom('users').select('username').where('username', '=', 'alice').execute()).map((r) => r.username), ['alice']);
      await assert.rejects(a.db.insertInto('users').values({ ...user, username: 'alice', aff_code: 'b1' }).execute(), { code: 'ER_DUP_ENTRY' });
      // Soft-deleted prefill groups free their name (MySQL: a generated column carries the partial unique index).
      const group = { type: 'model', items: '[]', created_time: 0, updated_time: 0 };
      await g.db.insertInto('prefill_groups').values({ ...group, name: 'g', deleted_at: 5 }).execute();
      await g.db.insertInto('prefill_groups').values({ ...group, name: 'g', deleted_at: null }).execute();
      await assert.rejects(g.db.insertInto('prefill_groups').values({ ...group, name: 'g', deleted_at: null }).execute(), { code: 'ER_DUP_ENTRY' });
      // Unlimited text is MEDIUMTEXT (TEXT stops at 64 KB); TEXT columns keep their defaults.
      const types = await sql<{ t: string }>`select data_type as t from information_schema.columns
        where table_schema = database() and table_name = 'channels' and column_name in ('key', 'models')`.execute(g.db);
      assert.deepEqual(types.rows.map((r) => r.t), ['mediumtext', 'mediumtext']);
      await g.db.insertInto('channels').values({ type: 1, key: 'k', created_time: 0 }).execute();
      const ch = await g.db.selectFrom('channels').select(['base_url', 'channel_info', 'balance']).executeTakeFirstOrThrow();
      assert.deepEqual(ch, { base_url: '', channel_info: '{}', balance: 0 });
    } finally {
      await a.close();
      await g.close();
      await freshA.drop();
      await freshG.drop();
    }
  });

  test('the session: strict, UTC, utf8mb4; BIGINT, COUNT and SUM as numbers; ANSI quotes and ||', async () => {
    const fresh = freshMysqlDatabase(MYSQL_URL);
    const d = await openDatabase<any>(fresh.url, { poolSize: 2 });
    try {
      await sql`create table t (id bigint primary key, s varchar(3), n bigint)`.execute(d.db);
      await assert.rejects(sql`insert into t values (1, 'abcd', 0)`.execute(d.db), /too long/i);
      await sql`insert into t values (1, '😀', 9007199254740991), (2, 'b', 2)`.execute(d.db);
      const { rows } = await sql<any>`select count(*) as c, sum(n) as s, max(n) as m, @@session.time_zone as tz,
        (select "s" from t where id = 1) as e, 'x' || 'y' as j from t`.execute(d.db);
      assert.deepEqual(rows[0], { c: 2, s: 9007199254740993, m: 9007199254740991, tz: '+00:00', e: '😀', j: 'xy' });
    } finally {
      await d.close();
      await fresh.drop();
    }
  });

  test('onConflict becomes INSERT IGNORE / ON DUPLICATE KEY UPDATE', async () => {
    const fresh = freshMysqlDatabase(MYSQL_URL);
    const d = await openDatabase<any>(fresh.url);
    try {
      await sql`create table kv (k varchar(10) primary key, v varchar(10) not null)`.execute(d.db);
      const put = (v: string) => d.db.insertInto('kv').values({ k: 'a', v }).onConflict((oc) => oc.column('k').doUpdateSet({ v })).execute();
      const keep = (v: string) => d.db.insertInto('kv').values({ k: 'a', v }).onConflict((oc) => oc.column('k').doNothing()).executeTakeFirst();
      assert.equal(Number((await keep('1')).numInsertedOrUpdatedRows), 1);
      assert.equal(Number((await keep('2')).numInsertedOrUpdatedRows), 0);
      await put('3');
      assert.deepEqual(await d.db.selectFrom('kv').selectAll().execute(), [{ k: 'a', v: '3' }]);
    } finally {
      await d.close();
      await fresh.drop();
    }
  });

  test('the URL names the database by its path or ?database=, and must name one', () => {
    assert.equal(mysqlDatabaseName('mysql://u:p@h:3306/app'), 'app');
    assert.equal(mysqlDatabaseName('mysql://u@h/ignored?database=other'), 'other');
    assert.throws(() => mysqlDatabaseName('mysql://u@h:3306/'), /must name its database/);
    assert.throws(() => mysqlDatabaseName('mysql://u@h:3306/a;drop'), /must name its database/);
  });
});
