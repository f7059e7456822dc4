import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Generated } from 'kysely';
import { cachingStatements, openDatabase } from './index.js';

interface T {
  t: { id: Generated<number>; v: string };
}

test('prepare() returns the cached statement for the same SQL text, a fresh one while it iterates', () => {
  const handle = new SQLite(':memory:');
  const db = cachingStatements(handle);
  db.exec('create table t (id integer primary key, v text)');
  const a = db.prepare('select * from t');
  assert.equal(db.prepare('select * from t'), a);
  assert.notEqual(db.prepare('select id from t'), a);
  db.prepare('insert into t (v) values (?)').run('x');
  db.prepare('insert into t (v) values (?)').run('y');
  const it = a.iterate();
  it.next();
  const b = db.prepare('select * from t');
  assert.notEqual(b, a, 'a busy statement is not handed out again');
  it.return?.();
  assert.equal(db.prepare('select * from t'), a);
  handle.close();
});

test('the cache is bounded (least recently used statement dropped)', () => {
  const handle = new SQLite(':memory:');
  const db = cachingStatements(handle);
  const first = db.prepare('select 0');
  const kept = db.prepare('select 1');
  for (let i = 2; i <= 500; i++) {
    db.prepare(`select ${i}`);
    if (i % 100 === 0) db.prepare('select 1');
  }
  assert.equal(db.prepare('select 1'), kept);
  assert.notEqual(db.prepare('select 0'), first);
  handle.close();
});

test('Kysely over the caching handle: repeated queries, transactions, rollback, streaming, schema change', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stmt-cache-'));
  const database = await openDatabase<T>(`sqlite://${dir}/x.sqlite`);
  const { db } = database;
  try {
    await db.schema.createTable('t').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('v', 'text').execute();
    for (let i = 0; i < 3; i++) await db.insertInto('t').values({ v: `v${i}` }).execute();
    const list = () => db.selectFrom('t').selectAll().orderBy('id').execute();
    assert.deepEqual((await list()).map((r) => r.v), ['v0', 'v1', 'v2']);

    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ v: 'in-trx' }).execute();
    });
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ v: 'rolled-back' }).execute();
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual((await list()).map((r) => r.v), ['v0', 'v1', 'v2', 'in-trx']);

    const streamed: string[] = [];
    for await (const row of db.selectFrom('t').selectAll().orderBy('id').stream()) {
      streamed.push(row.v);
      if (streamed.length === 2) break;
    }
    assert.deepEqual(streamed, ['v0', 'v1']);
    const all: string[] = [];
    for await (const row of db.selectFrom('t').selectAll().orderBy('id').stream()) all.push(row.v);
    assert.equal(all.length, 4);

    await sql`alter table t add column w text`.execute(db);
    await db.updateTable('t').set({ v: 'changed' }).where('id', '=', 1).execute();
    const rows = (await list()) as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(Object.keys(rows[0]!), ['id', 'v', 'w']);
    assert.equal(rows[0]!.v, 'changed');
  } finally {
    await database.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('Kysely on cachingStatements over an in-memory handle', async () => {
  const db = new Kysely<T>({ dialect: new SqliteDialect({ database: cachingStatements(new SQLite(':memory:')) }) });
  await sql`create table t (id integer primary key, v text)`.execute(db);
  await db.insertInto('t').values({ v: 'a' }).execute();
  assert.equal((await db.selectFrom('t').select('v').executeTakeFirstOrThrow()).v, 'a');
  await db.destroy();
});
