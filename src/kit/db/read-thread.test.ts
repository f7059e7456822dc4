import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { sql, type Generated } from 'kysely';
import { eachDatabase, freshDatabase, tempDir } from '../../../test/helpers/services.js';
import { openDatabase, type Database } from './index.js';
import { ReadThread, ReadThreadError, readOffThread } from './read-thread.js';

interface T {
  items: { id: Generated<number>; label: string | null; score: number; data: Buffer | null };
}

/** A query that keeps SQLite busy for a few hundred milliseconds. */
const SLOW = 'with recursive c(n) as (select 1 union all select n + 1 from c where n < 3000000) select count(*) as n from c';

eachDatabase('readOffThread', (v) => {
  let database: Database<T>;
  let drop = async () => {};
  const dir = tempDir('read-thread-');
  const items = () => database.db.selectFrom('items').select(['id', 'label', 'score', 'data']).orderBy('id');

  before(async () => {
    const { url, drop: dropIt } = freshDatabase(v, `${dir}/x.sqlite`);
    drop = dropIt;
    database = await openDatabase<T>(url, { readThread: true });
    const id = { postgres: 'serial primary key', mysql: 'integer auto_increment primary key', sqlite: 'integer primary key' }[v.name];
    const blob = v.name === 'postgres' ? 'bytea' : 'blob';
    await sql.raw(`create table items (id ${id}, label text, score double precision not null, data ${blob})`).execute(database.db);
    await database.db
      .insertInto('items')
      .values([
        { label: 'plain', score: 1, data: null },
        { label: 'ünïcødé ✓ "quoted"', score: 2.5, data: Buffer.from([0, 1, 2, 255]) },
        { label: null, score: -0.125, data: Buffer.alloc(0) },
      ])
      .execute();
  });
  after(async () => {
    await database.close();
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('returns exactly the rows the main connection returns (text, null, floats, BLOBs as Buffers)', async () => {
    const off = await readOffThread(database.db, items());
    assert.deepEqual(off, await items().execute());
    assert.ok(Buffer.isBuffer(off[1]!.data));
    assert.deepEqual([...off[1]!.data!], [0, 1, 2, 255]);
  });

  test('sees committed data only: not the open transaction of the main connection, which still sees its own writes', async () => {
    const count = async (db: typeof database.db) => Number((await readOffThread(db, db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n'))))[0]!.n);
    const before = await count(database.db);
    await database.db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ label: 'uncommitted', score: 0, data: null }).execute();
      // On SQLite this read would wait forever for the connection the transaction holds, were it not
      // served by the thread's own connection.
      assert.equal(await count(database.db), before);
      assert.equal(await count(trx), before + 1);
    });
    assert.equal(await count(database.db), before + 1);
  });

  if (v.name !== 'sqlite') return;

  test('an SQL error rejects with SQLite code and message, and the next read still works', async () => {
    await assert.rejects(readOffThread(database.db, sql`select * from no_such_table`), (e: unknown) => {
      assert.ok(e instanceof ReadThreadError);
      assert.equal(e.code, 'SQLITE_ERROR');
      assert.match(e.message, /no such table/);
      return true;
    });
    assert.equal((await readOffThread(database.db, items())).length, 4);
  });

  test('refuses to write, even with a statement that returns rows', async () => {
    await assert.rejects(readOffThread(database.db, sql`delete from items returning id`), ReadThreadError);
    assert.equal((await items().execute()).length, 4);
  });

  test('the event loop keeps running while a slow read runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const [row] = await readOffThread(database.db, sql<{ n: number }>`${sql.raw(SLOW)}`);
      assert.equal(row!.n, 3_000_000);
    } finally {
      clearInterval(timer);
    }
    // Run on the main thread, the same query would let no timer fire before it finished.
    assert.ok(ticks >= 3, `only ${ticks} timer ticks during the read`);
  });
});

test('readOffThread: an in-memory SQLite database has no thread and reads on its own connection', async () => {
  const database = await openDatabase<T>('sqlite://:memory:', { readThread: true });
  try {
    await sql`create table items (id integer primary key, label text, score real not null, data blob)`.execute(database.db);
    await database.db.insertInto('items').values({ label: 'x', score: 1, data: null }).execute();
    assert.deepEqual(await readOffThread(database.db, database.db.selectFrom('items').select('label')), [{ label: 'x' }]);
  } finally {
    await database.close();
  }
});

test('ReadThread: a thread that dies fails its pending reads and the next read starts a new one', async () => {
  const file = path.join(tempDir('read-thread-'), 'x.sqlite');
  const database = await openDatabase<T>(`sqlite://${file}`);
  const thread = new ReadThread(file);
  try {
    await sql`create table items (id integer primary key, label text, score real not null, data blob)`.execute(database.db);
    const pending = thread.all(SLOW, []);
    await thread.close();
    await assert.rejects(pending, /read thread failed/);
    assert.deepEqual(await thread.all('select count(*) as n from items', []), [{ n: 0 }]);
  } finally {
    await thread.close();
    await database.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
});
