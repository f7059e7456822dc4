import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { eachDatabase, freshDatabase, tempDir } from '../helpers/services.js';
import { openSource, sourceUrl, unixSeconds, truthy, type Source } from '../../src/kit/db/source.js';
import { createNewApiDb, type NewApiDb } from './new-api-source.js';

test('sourceUrl: URLs as given, a bare path is a SQLite file, other schemes are refused', () => {
  assert.equal(sourceUrl('postgres://u@h/db'), 'postgres://u@h/db');
  assert.equal(sourceUrl('mysql://root@127.0.0.1:3306/newapi'), 'mysql://root@127.0.0.1:3306/newapi');
  assert.equal(sourceUrl('/data/one-api.db'), 'sqlite:///data/one-api.db');
  assert.throws(() => sourceUrl('http://example.com/db'), /--from must be/);
});

test('unixSeconds and truthy read what each driver returns', () => {
  assert.equal(unixSeconds('2023-11-14 22:13:20.123456789+00:00'), 1_700_000_000);
  assert.equal(unixSeconds(new Date(1_700_000_000_500)), 1_700_000_000);
  assert.equal(unixSeconds(1_700_000_000), 1_700_000_000);
  assert.equal(unixSeconds(null), null);
  assert.equal(unixSeconds('garbage'), null);
  assert.deepEqual([1, true, '1', 0, false, null, '0'].map(truthy), [true, true, true, false, false, false, false]);
});

eachDatabase('import source', (v) => {
  const dir = tempDir();
  let url: string;
  let drop = async () => {};
  let writable: NewApiDb;
  let source: Source;
  before(async () => {
    ({ url, drop } = freshDatabase(v, `${dir}/new-api.db`));
    writable = await createNewApiDb(url);
    await writable.db.insertInto('users').values({ id: 1, username: 'a', password: 'x' }).execute();
    source = await openSource(url);
  });
  after(async () => {
    await source?.close();
    await writable?.database.close();
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('is opened read-only: reads work, writes are refused by the database', async () => {
    assert.ok(source.tables.has('users') && source.tables.has('two_fa_backup_codes'));
    assert.deepEqual((await source.rows('users')).map((u) => u.username), ['a']);
    assert.deepEqual(await source.rows('no_such_table'), []);
    const hash = v.name === 'sqlite' ? crypto.createHash('sha256').update(fs.readFileSync(`${dir}/new-api.db`)).digest('hex') : '';
    await assert.rejects(source.database.db.insertInto('users').values({ id: 2, username: 'b', password: 'y' }).execute(), /readonly|read-only|read only/i);
    await assert.rejects(source.database.db.deleteFrom('users').execute(), /readonly|read-only|read only/i);
    if (v.name === 'sqlite') assert.equal(crypto.createHash('sha256').update(fs.readFileSync(`${dir}/new-api.db`)).digest('hex'), hash);
    assert.equal((await writable.db.selectFrom('users').selectAll().execute()).length, 1);
  });

  test('pages come in order and end', async () => {
    await writable.db.insertInto('users').values([2, 3, 4, 5].map((id) => ({ id, username: `u${id}`, password: 'x' }))).execute();
    const seen: number[][] = [];
    for await (const page of source.pages('users', ['id'], 2)) seen.push(page.map((u) => Number(u.id)));
    assert.deepEqual(seen, [[1, 2], [3, 4], [5]]);
  });
});
