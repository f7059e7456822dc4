import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely, type Transaction } from 'kysely';
import { eachDatabase, freshDatabase, tempDir } from '../../../test/helpers/services.js';
import { openDatabase, type Database } from './index.js';
import { GroupCommit, type Sink } from './group-commit.js';
import { insertRows } from './insert-rows.js';

interface T {
  counters: { id: number; n: number };
  marks: { id: string };
}

eachDatabase('group commit', (v) => {
  let database: Database<T>;
  let drop = async () => {};
  before(async () => {
    const fresh = freshDatabase(v, `${tempDir('group-commit-')}/g.sqlite`);
    drop = fresh.drop;
    database = await openDatabase<T>(fresh.url, { poolSize: 4 });
    await sql`create table counters (id integer primary key, n integer not null)`.execute(database.db);
    await sql`create table marks (id varchar(64) primary key)`.execute(database.db);
    await database.db.insertInto('counters').values([{ id: 1, n: 0 }, { id: 2, n: 0 }, { id: 3, n: 0 }]).execute();
  });
  after(async () => {
    await database.close();
    await drop();
  });

  const count = async (db: Kysely<T>, id: number) => Number((await db.selectFrom('counters').select('n').where('id', '=', id).executeTakeFirstOrThrow()).n);
  const bump = (id: number, by = 1) => (trx: Transaction<T>) => trx.updateTable('counters').set((eb) => ({ n: eb('n', '+', by) })).where('id', '=', id).execute();

  test('concurrent work shares one transaction, and each caller gets its own answer after the commit', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100 });
    const seen = new Set<unknown>();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        writer.run(async (trx) => {
          seen.add(trx);
          await bump(1)(trx);
          return i * 2;
        }),
      ),
    );
    assert.deepEqual(answers, Array.from({ length: 40 }, (_, i) => i * 2));
    assert.equal(seen.size, 1, 'all 40 in one transaction');
    assert.equal(await count(database.db, 1), 40);
    await writer.close();
  });

  test('a batch holds at most maxItems; the rest follows in the next; onBatch is told each size', async () => {
    const sizes: number[] = [];
    const writer = new GroupCommit(database.db, { maxItems: 8, onBatch: (n) => sizes.push(n) });
    const seen = new Map<unknown, number>();
    await Promise.all(Array.from({ length: 20 }, () => writer.run(async (trx) => void seen.set(trx, (seen.get(trx) ?? 0) + 1))));
    assert.deepEqual([...seen.values()], [8, 8, 4]);
    assert.deepEqual(sizes, [8, 8, 4]);
    await writer.close();
  });

  test('a failing piece leaves its neighbours committed and its own writes rolled back', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100 });
    const before2 = await count(database.db, 2);
    const runs = Array.from({ length: 12 }, (_, i) =>
      writer.run(async (trx) => {
        await bump(2)(trx);
        await trx.insertInto('marks').values({ id: `m${i}` }).execute();
        if (i === 4) throw new Error('refused');
        // A database error too: the key of piece 3 again (PostgreSQL aborts the transaction for it).
        if (i === 7) await trx.insertInto('marks').values({ id: 'm3' }).execute();
        return i;
      }),
    );
    const settled = await Promise.allSettled(runs);
    assert.deepEqual(settled.map((s) => s.status), settled.map((_, i) => (i === 4 || i === 7 ? 'rejected' : 'fulfilled')));
    assert.match(String((settled[4] as PromiseRejectedResult).reason), /refused/);
    assert.equal(await count(database.db, 2), before2 + 10, 'the two failed pieces bumped nothing');
    const marks = (await database.db.selectFrom('marks').select('id').where('id', 'like', 'm%').execute()).map((m) => m.id).sort();
    assert.deepEqual(marks, ['m0', 'm1', 'm10', 'm11', 'm2', 'm3', 'm5', 'm6', 'm8', 'm9']);
    await writer.close();
  });

  test('a transaction failing as a whole (a deadlock victim) runs each piece again alone', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100 });
    const before3 = await count(database.db, 3);
    let failedOnce = false;
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        writer.run(async (trx) => {
          await bump(3)(trx);
          if (i === 2 && !failedOnce) {
            failedOnce = true;
            throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
          }
          return i;
        }),
      ),
    );
    assert.deepEqual(answers, [0, 1, 2, 3, 4]);
    assert.equal(await count(database.db, 3), before3 + 5, 'every piece counted once');
    await writer.close();
  });

  // Rows queued by pieces: one multi-row INSERT per batch (insert-rows.ts), counted to show it.
  const insertMarks = insertRows<T>('marks', ['id'], 5);
  let markStatements = 0;
  const marksSink: Sink<T, string> = async (trx, ids) => {
    markStatements += Math.ceil(ids.length / 5);
    await insertMarks(trx, ids.map((id) => [id]));
  };
  const marked = async (prefix: string) => (await database.db.selectFrom('marks').select('id').where('id', 'like', `${prefix}%`).execute()).map((m) => m.id).sort();

  test('queued rows are written once per batch, in chunks, and commit with their pieces', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100 });
    markStatements = 0;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => writer.run(async (_trx, batch) => (batch.add(marksSink, `q${String(i).padStart(2, '0')}`), i))));
    assert.deepEqual(answers, Array.from({ length: 12 }, (_, i) => i));
    assert.equal(markStatements, 3, '12 rows in statements of at most 5');
    assert.deepEqual(await marked('q'), Array.from({ length: 12 }, (_, i) => `q${String(i).padStart(2, '0')}`));
    await writer.close();
  });

  test('a failing piece drops its queued rows; rows that fail to write fail only the piece that queued them', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100 });
    const before2 = await count(database.db, 2);
    const runs = Array.from({ length: 6 }, (_, i) =>
      writer.run(async (trx, batch) => {
        await bump(2)(trx);
        batch.add(marksSink, `r${i}`);
        if (i === 1) throw new Error('refused');
        // Its row's key is taken (m0, from an earlier test): the batch's insert fails, so each piece runs alone.
        if (i === 4) batch.add(marksSink, 'm0');
        return i;
      }),
    );
    const settled = await Promise.allSettled(runs);
    assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((settled[1] as PromiseRejectedResult).reason), /refused/);
    assert.doesNotMatch(String((settled[4] as PromiseRejectedResult).reason), /queued rows/, 'the database error itself, not the wrapper');
    assert.deepEqual(await marked('r'), ['r0', 'r2', 'r3', 'r5']);
    assert.equal(await count(database.db, 2), before2 + 4, 'the two failed pieces bumped nothing');
    await writer.close();
  });

  test('pieces run in the order of their keys; close() waits for accepted work and refuses more', async () => {
    const writer = new GroupCommit(database.db, { maxItems: 100, windowMs: 5 });
    const order: number[] = [];
    const runs = [5, 1, 4, 2, 3].map((k) => writer.run(async () => void order.push(k), k));
    await writer.close();
    assert.deepEqual(order, [1, 2, 3, 4, 5]);
    await Promise.all(runs);
    await assert.rejects(writer.run(async () => 1), /closed/);
  });

  test('together: every transaction first locks its pieces\' keys in order, then the pieces start at once; a failing one still fails alone', async () => {
    const locks: number[][] = [];
    const lock = async (trx: Transaction<T>, keys: number[]) => {
      locks.push(keys);
      await trx.selectFrom('counters').select('id').where('id', 'in', keys.length ? keys : [0]).execute();
    };
    const writer = new GroupCommit(database.db, { maxItems: 100, together: { lock } });
    const before1 = await count(database.db, 1);
    let running = 0;
    let most = 0;
    const runs = [3, 1, 2, 1].map((key, i) =>
      writer.run(async (trx) => {
        most = Math.max(most, ++running);
        await bump(1)(trx);
        running--;
        if (i === 2) throw new Error('refused');
        return i;
      }, key),
    );
    const settled = await Promise.allSettled(runs);
    assert.deepEqual(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'rejected')), [0, 1, 'rejected', 3]);
    assert.equal(most, 4, 'the four pieces were running at once');
    assert.deepEqual(locks[0], [1, 2, 3], 'keys once each, in order');
    assert.ok(locks.length >= 2 && locks.every((k) => k.join() === '1,2,3'), 'the run again (with a savepoint per piece) locks them first too');
    assert.equal(await count(database.db, 1), before1 + 3, 'the failed piece bumped nothing');
    await writer.close();
  });

  test('many writers at once on one row: no update lost', async () => {
    const writers = [new GroupCommit(database.db, { maxItems: 16, concurrency: v.name === 'sqlite' ? 1 : 3 }), new GroupCommit(database.db, { maxItems: 7, concurrency: 2 })];
    const start = await count(database.db, 1);
    await Promise.all(Array.from({ length: 300 }, (_, i) => writers[i % 2]!.run(bump(1, 2), 1)));
    assert.equal(await count(database.db, 1), start + 600);
    await Promise.all(writers.map((w) => w.close()));
  });
});
