import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { POSTGRES_URL, freshSchema } from '../../../test/helpers/services.js';
import { openDatabase, type Database } from './index.js';

const skip = POSTGRES_URL ? false : 'TEST_POSTGRES_URL not set: PostgreSQL-only suite skipped (CI sets it)';

/** The statements the pool's one connection holds prepared on the server, by their text. */
async function preparedTexts(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db);
  return rows.map((r) => r.statement);
}

describe('prepared statements kept per PostgreSQL connection', { skip }, () => {
  const schemas: { drop: () => Promise<void> }[] = [];
  const open: Database<any>[] = [];
  after(async () => {
    for (const d of open) await d.close();
    for (const s of schemas) await s.drop();
  });

  async function database(params = '') {
    const s = freshSchema(POSTGRES_URL);
    schemas.push(s);
    const d = await openDatabase<any>(`${s.url}${params}`, { poolSize: 1 });
    open.push(d);
    await sql`create table t (id integer primary key, v text)`.execute(d.db);
    return d.db;
  }

  test('a statement with parameters is prepared once and then reused; one without is not prepared', async () => {
    const db = await database();
    for (let i = 1; i <= 3; i++) await db.insertInto('t').values({ id: i, v: `v${i}` }).execute();
    const rows = await db.selectFrom('t').select('v').where('id', '=', 2).execute();
    assert.deepEqual(rows, [{ v: 'v2' }]);
    const texts = await preparedTexts(db);
    assert.equal(texts.filter((t) => t.startsWith('insert into "t"')).length, 1, 'three inserts, one prepared statement');
    assert.equal(texts.filter((t) => t.startsWith('select "v" from "t"')).length, 1);
    assert.ok(!texts.some((t) => t.startsWith('create table')), 'statements without parameters stay unnamed');
  });

  test('at most statement_cache_size stay prepared: the least recently used is deallocated', async () => {
    const db = await database('&statement_cache_size=2');
    await db.insertInto('t').values({ id: 1, v: 'a' }).execute();
    for (const column of ['id', 'v', 'id', 'v'] as const) await db.selectFrom('t').select(column).where('id', '=', 1).execute();
    // Three texts were used (the insert, two selects), two are kept: the insert, least recently used, went.
    const texts = await preparedTexts(db);
    assert.equal(texts.length, 2, texts.join(' | '));
    assert.ok(texts.every((t) => t.startsWith('select')), texts.join(' | '));
    assert.deepEqual(await db.insertInto('t').values({ id: 2, v: 'b' }).returning('id').execute(), [{ id: 2 }], 'an evicted statement runs again');
  });

  test('a statement that never parsed is dropped without a DEALLOCATE, which would abort the transaction it fell in', async () => {
    const db = await database('&statement_cache_size=1');
    await assert.rejects(sql`select ${1}::int from no_such_table`.execute(db), /no_such_table/);
    // The next statement takes its place in the cache of one, inside a transaction that must still commit.
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 1, v: 'a' }).execute();
      await trx.insertInto('t').values({ id: 2, v: 'b' }).execute();
    });
    assert.equal((await db.selectFrom('t').select('id').where('id', '>', 0).execute()).length, 2);
  });

  test('statement_cache_size=0 prepares nothing; a value that is not a whole number is refused', async () => {
    const db = await database('&statement_cache_size=0');
    await db.insertInto('t').values({ id: 1, v: 'a' }).execute();
    await db.selectFrom('t').selectAll().where('id', '=', 1).execute();
    assert.deepEqual(await preparedTexts(db), []);
    await assert.rejects(openDatabase(`${POSTGRES_URL}?statement_cache_size=lots`), /statement_cache_size must be a whole number/);
  });

  test('a statement whose columns changed under it fails once, then is prepared again', async () => {
    const db = await database();
    await db.insertInto('t').values({ id: 1, v: 'a' }).execute();
    const read = () => db.selectFrom('t').selectAll().where('id', '=', 1).execute();
    assert.deepEqual(await read(), [{ id: 1, v: 'a' }]);
    // Another process migrates the table (here on the same connection: the effect on the cached plan is the same).
    await sql`alter table t add column n integer not null default 7`.execute(db);
    await assert.rejects(read(), /cached plan must not change result type/);
    assert.deepEqual(await read(), [{ id: 1, v: 'a', n: 7 }]);
  });
});
