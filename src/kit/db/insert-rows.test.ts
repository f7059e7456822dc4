import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { eachDatabase, freshDatabase, tempDir } from '../../../test/helpers/services.js';
import { openDatabase, type Database } from './index.js';
import { insertAll, insertRows } from './insert-rows.js';

interface T {
  r: { id: number; label: string | null; n: number | null };
  s: { id: number; r_id: number };
}

const TRICKY = ['plain', "it's \"quoted\"", 'back\\slash', '新年快乐 🎉', 'line\nbreak\ttab', '{"json":[1,2]}', ''];

eachDatabase('insertRows', (v) => {
  let database: Database<T>;
  let drop: () => Promise<void>;
  before(async () => {
    const fresh = freshDatabase(v, path.join(tempDir(), 'rows.sqlite'));
    drop = fresh.drop;
    database = await openDatabase<T>(fresh.url, { poolSize: 1 });
    await sql`create table r (id bigint primary key, label text, n bigint)`.execute(database.db);
    await sql`create table s (id bigint primary key, r_id bigint not null references r (id))`.execute(database.db);
  });
  after(async () => {
    await database.close();
    await drop();
  });
  const insert = insertRows<T>('r', ['id', 'label', 'n'], 50);
  const read = async (from: number, to: number) =>
    database.db.selectFrom('r').select(['id', 'label', 'n']).where('id', '>=', from).where('id', '<', to).orderBy('id').execute();

  test('many rows with every kind of text, nulls and large numbers arrive as they were', async () => {
    const rows = Array.from({ length: 130 }, (_, i) => [i, i % 9 === 8 ? null : TRICKY[i % TRICKY.length]!, i % 5 === 4 ? null : 2 ** 52 + i]);
    await insert(database.db, rows);
    const back = await read(0, 1000);
    assert.deepEqual(
      back.map((r) => [Number(r.id), r.label, r.n === null ? null : Number(r.n)]),
      rows,
    );
  });

  test('a value JSON would not carry as it is (bytes) is written through VALUES, on every database', async () => {
    await insert(database.db, [
      [1000, Buffer.from('bytes') as unknown as string, 1],
      [1001, 'x', 2],
    ]);
    const back = await read(1000, 1002);
    assert.deepEqual(back.map((r) => String(r.label)), ['bytes', 'x']);
  });

  const insertS = insertRows<T>('s', ['id', 'r_id']);
  test('insertAll writes several tables, a row referring to another written with it, or none of them', async () => {
    await insertAll(database.db, [
      { into: insert, rows: [[3000, 'a', 1], [3001, 'b', 2]] },
      { into: insertS, rows: [[1, 3000], [2, 3001]] },
    ]);
    assert.deepEqual((await database.db.selectFrom('s').select(['id', 'r_id']).orderBy('id').execute()).map((r) => [Number(r.id), Number(r.r_id)]), [[1, 3000], [2, 3001]]);
    const failing = database.db.transaction().execute((trx) =>
      insertAll(trx, [
        { into: insert, rows: [[3002, 'c', 3], [3003, 'd', 4]] },
        { into: insertS, rows: [[3, 3002], [4, 9999]] },
      ]),
    );
    await assert.rejects(failing);
    assert.equal((await read(3002, 3004)).length, 0, 'the first table\'s rows went with the failure');
  });

  if (v.name === 'postgres') {
    test('on PostgreSQL the statement is the same for any number of rows: prepared once', async () => {
      await insert(database.db, [[2000, 'a', 1], [2001, 'b', 2]]);
      await insert(database.db, [[2002, 'c', 3], [2003, 'd', 4], [2004, 'e', 5]]);
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like 'insert into "r"%json_populate_recordset%'`.execute(database.db);
      assert.equal(rows.length, 1, rows.map((r) => r.statement).join(' | '));
      assert.equal((await read(2000, 2005)).length, 5);
      const both = await sql<{ statement: string }>`select statement from pg_prepared_statements where statement like 'with "w0" as (insert into "r"%insert into "s"%'`.execute(database.db);
      assert.equal(both.rows.length, 1, 'insertAll: one statement for both tables');
    });
  }
});
