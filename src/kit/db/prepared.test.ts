import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Generated, type Kysely } from 'kysely';
import { eachDatabase, freshDatabase } from '../../../test/helpers/services.js';
import { openDatabase, type Database } from './index.js';
import { prepared } from './prepared.js';

interface T {
  items: { id: Generated<number>; owner: number; status: string; n: number };
}

const byOwner = prepared((db: Kysely<T>, owner: number, min: number) =>
  db.selectFrom('items').select(['id', 'n']).where('owner', '=', owner).where('status', '=', 'active').where('n', '>=', min).orderBy('id'),
);
const bump = prepared((db: Kysely<T>, id: number, n: number) => db.updateTable('items').set({ n }).where('id', '=', id).where('status', '=', 'active'));

eachDatabase('prepared queries', (v) => {
  let database: Database<T>;
  let drop = async () => {};
  before(async () => {
    let url = 'sqlite://:memory:';
    if (v.name !== 'sqlite') ({ url, drop } = freshDatabase(v, ''));
    database = await openDatabase<T>(url);
    const id = { postgres: 'serial primary key', mysql: 'integer auto_increment primary key', sqlite: 'integer primary key' }[v.name];
    await sql.raw(`create table items (id ${id}, owner integer not null, status varchar(16) not null, n integer not null)`).execute(database.db);
    await database.db
      .insertInto('items')
      .values([
        { owner: 1, status: 'active', n: 1 },
        { owner: 1, status: 'active', n: 5 },
        { owner: 1, status: 'revoked', n: 9 },
        { owner: 2, status: 'active', n: 7 },
      ])
      .execute();
  });
  after(async () => {
    await database.close();
    await drop();
  });

  test('binds new values on every call and keeps the constants of the query', async () => {
    for (const [owner, min] of [[1, 0], [1, 2], [2, 0], [3, 0], [1, 2]]) {
      const built = await database.db.selectFrom('items').select(['id', 'n']).where('owner', '=', owner).where('status', '=', 'active').where('n', '>=', min).orderBy('id').execute();
      const { rows } = await byOwner(database.db, owner, min);
      assert.deepEqual(rows.map((r) => ({ ...r, id: Number(r.id) })), built.map((r) => ({ ...r, id: Number(r.id) })), `owner ${owner}, min ${min}`);
    }
    assert.deepEqual((await byOwner(database.db, 1, 2)).rows.map((r) => r.n), [5]);
  });

  test('runs inside a transaction, which still rolls back, and reports affected rows', async () => {
    const [first] = (await byOwner(database.db, 2, 0)).rows;
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        const r = await bump(trx, Number(first.id), 70);
        assert.equal(Number(r.numAffectedRows), 1);
        assert.deepEqual((await byOwner(trx, 2, 0)).rows.map((x) => x.n), [70]);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual((await byOwner(database.db, 2, 0)).rows.map((x) => x.n), [7]);
    const none = await bump(database.db, 999_999, 1);
    assert.equal(Number(none.numAffectedRows), 0);
  });

  test('a read never sees the uncommitted writes of a transaction in progress', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const trx = database.db.transaction().execute(async (t) => {
      await t.insertInto('items').values({ owner: 9, status: 'active', n: 1 }).execute();
      await held;
    });
    await new Promise((r) => setTimeout(r, 20));
    let answered: number[] | undefined;
    const read = byOwner(database.db, 9, 0).then((r) => (answered = r.rows.map((x) => x.n)));
    await new Promise((r) => setTimeout(r, 20));
    // SQLite has one connection: the read waits for the transaction; PostgreSQL answers from another one.
    if (answered !== undefined) assert.deepEqual(answered, [], 'answered while the transaction was open');
    release();
    await trx;
    await read;
    assert.deepEqual((await byOwner(database.db, 9, 0)).rows.map((x) => x.n), [1]);
  });

  test('refuses an argument that does not come out as a parameter of its own', async () => {
    const inList = prepared((db: Kysely<T>, id: number) => db.selectFrom('items').selectAll().where('id', 'in', [id, id]));
    await assert.doesNotReject(inList(database.db, 1), 'an in-list of stand-ins still binds each one');
    const inlined = prepared((db: Kysely<T>, n: number) => db.selectFrom('items').selectAll().limit(sql.lit(n)));
    await assert.rejects(inlined(database.db, 1), /argument 0 is not passed through/);
  });
});
