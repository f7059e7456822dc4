import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql, type Migration } from 'kysely';
import pg from 'pg';
import { POSTGRES_URL, freshSchema, tempDir } from '../../../test/helpers/services.js';
import { migrate, openDatabase } from './index.js';

const skip = POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set: PostgreSQL-only suite skipped (CI sets it)';

let applied = 0;
const migrations: Record<string, Migration> = {
  '0001_items': {
    async up(db) {
      applied++;
      await sql`create table items (id bigserial primary key, name text, n integer not null default 0)`.execute(db);
    },
  },
};

describe('migrations on PostgreSQL schemas', { skip }, () => {
  test('the introspector sees only the current schema, with column facts', async () => {
    const mine = freshSchema(POSTGRES_URL);
    const other = freshSchema(POSTGRES_URL);
    const a = await openDatabase(mine.url);
    const b = await openDatabase(other.url);
    try {
      await sql`create table items (id bigserial primary key, name text, n integer not null default 0)`.execute(a.db);
      await sql`create table items (id integer)`.execute(b.db);
      await sql`create table elsewhere (id integer)`.execute(b.db);
      const tables = await a.db.introspection.getTables();
      assert.deepEqual(tables.map((t) => [t.schema, t.name]), [[a.schema, 'items']]);
      const cols = Object.fromEntries(tables[0].columns.map((c) => [c.name, c]));
      assert.deepEqual(Object.keys(cols), ['id', 'name', 'n']);
      assert.equal(cols.id.isAutoIncrementing, true);
      assert.equal(cols.id.isNullable, false);
      assert.equal(cols.name.isNullable, true);
      assert.equal(cols.name.hasDefaultValue, false);
      assert.equal(cols.n.isAutoIncrementing, false);
      assert.equal(cols.n.hasDefaultValue, true);
      assert.equal(cols.n.dataType, 'int4');
    } finally {
      await a.close();
      await b.close();
      await mine.drop();
      await other.drop();
    }
  });

  test('migrating while other schemas of the database are dropped succeeds, and only once', async () => {
    // Kysely's own introspector failed about one start in five here ("schema … does not exist").
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    let stop = false;
    const churn = (async () => {
      for (let i = 0; !stop; i++) {
        const s = `churn_${process.pid}_${i}`;
        await admin.query(`create schema ${s}; create table ${s}.a (id bigserial primary key, x text); create table ${s}.b (id bigserial primary key)`);
        await admin.query(`drop schema ${s} cascade`);
      }
    })();
    const failures: string[] = [];
    applied = 0;
    try {
      for (let i = 0; i < 40; i++) {
        const s = freshSchema(POSTGRES_URL);
        const d = await openDatabase(s.url);
        try {
          await migrate(d, 'race', migrations);
          await migrate(d, 'race', migrations);
        } catch (e) {
          failures.push((e as Error).message);
        } finally {
          await d.close();
          await s.drop();
        }
      }
    } finally {
      stop = true;
      await churn;
      await admin.end();
    }
    assert.deepEqual(failures, []);
    assert.equal(applied, 40);
  });
});

test('a SQLite migration run that fails leaves none of its tables behind', async () => {
  const dir = tempDir();
  const d = await openDatabase(`sqlite://${dir}/m.sqlite`);
  try {
    const failing: Record<string, Migration> = {
      '0001_a': { up: (db) => sql`create table a (id integer)`.execute(db).then(() => {}) },
      '0002_b': { up: (db) => sql`insert into missing (id) values (1)`.execute(db).then(() => {}) },
    };
    await assert.rejects(migrate(d, 'rollback', failing), /migration 0002_b failed/);
    const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(d.db);
    assert.deepEqual(rows, []);
    await migrate(d, 'rollback', { '0001_a': failing['0001_a'] });
    const again = await sql<{ name: string }>`select name from sqlite_master where type = 'table' order by name`.execute(d.db);
    assert.deepEqual(again.rows.map((r) => r.name), ['a', 'rollback_migrations', 'rollback_migrations_lock']);
  } finally {
    await d.close();
  }
});
