import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import bcrypt from 'bcryptjs';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { databases, importCli, line, openGateway } from './harness.js';

/** Makes inserting a row whose `column` is 'boom' fail inside the database itself. */
async function refuseBoom(db: Kysely<any>, dialect: string, table: string, column: string) {
  if (dialect === 'sqlite') {
    await sql.raw(`CREATE TRIGGER ${table}_boom BEFORE INSERT ON ${table} WHEN NEW.${column} = 'boom' BEGIN SELECT RAISE(ABORT, 'boom row refused'); END`).execute(db);
  } else if (dialect === 'mysql') {
    await sql.raw(`CREATE TRIGGER ${table}_boom BEFORE INSERT ON ${table} FOR EACH ROW BEGIN IF NEW.${column} = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom row refused'; END IF; END`).execute(db);
  } else {
    await sql.raw(`CREATE FUNCTION ${table}_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.${column} = 'boom' THEN RAISE EXCEPTION 'boom row refused'; END IF; RETURN NEW; END $$`).execute(db);
    await sql.raw(`CREATE TRIGGER ${table}_boom BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_boom()`).execute(db);
  }
}

async function dropBoom(db: Kysely<any>, dialect: string, table: string) {
  await sql.raw(dialect === 'postgres' ? `DROP TRIGGER ${table}_boom ON ${table}` : `DROP TRIGGER ${table}_boom`).execute(db);
}

eachDatabase('import new-api: a failing batch', (v) => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  const run = (...args: string[]) => importCli(s, d, '--from', d.from, '--batch-size', '2', ...args);

  before(async () => {
    s = await startAccount(v);
    d = await databases(v, s);
    const names = ['u1', 'u2', 'boom', 'u4'];
    await d.source.db
      .insertInto('users')
      .values(names.map((username, i) => ({ id: i + 1, username, password: bcrypt.hashSync('pw', 4), display_name: username, role: 1, status: 1, aff_code: `a${i}`, created_at: 1 })))
      .execute();
    await d.source.db
      .insertInto('channels')
      .values(names.map((name, i) => ({ id: i + 1, type: 1, key: `sk-rollback-${i}`, status: 1, name, models: 'm1', group: 'default', channel_info: '{}' })))
      .execute();
    await refuseBoom(s.ctx.database.db, v.name, 'users', 'username');
    const g = await openGateway(s, d.gatewayUrl);
    try {
      await refuseBoom(g.ctx.db, v.name, 'channels', 'name');
    } finally {
      await g.close();
    }
  });
  after(async () => {
    await d?.close();
    await s?.close();
  });

  test('rolls back only that batch (users and channels), reports it, and a later run brings in the rest', async () => {
    const r = await run();
    assert.match(r.error ?? '', /^4 rows were in batches that failed and were rolled back/);
    assert.equal(line(r.text, 'users'), 'users: read 4, imported 2, updated 0, unchanged 0, skipped 0, failed 2');
    assert.equal(line(r.text, 'channels'), 'channels: read 4, imported 2, updated 0, unchanged 0, skipped 0, failed 2');
    assert.match(r.text, /\n {2}3…4: batch rolled back: .*boom row refused/);
    assert.ok(!r.text.includes('sk-rollback'));
    const users = await s.ctx.database.db.selectFrom('users').select('username').orderBy('username').execute();
    assert.deepEqual(users.map((u) => u.username), ['u1', 'u2']);
    const accountMap = await s.ctx.database.db.selectFrom('import_map' as any).select('source_id').orderBy('source_id').execute();
    assert.deepEqual(accountMap.map((m: any) => m.source_id), ['1', '2']);
    let g = await openGateway(s, d.gatewayUrl);
    try {
      assert.deepEqual((await g.ctx.db.selectFrom('channels').select('name').orderBy('name').execute()).map((c) => c.name), ['u1', 'u2']);
      assert.equal((await g.ctx.db.selectFrom('abilities').selectAll().execute()).length, 2);
      assert.equal((await g.ctx.db.selectFrom('import_map' as any).selectAll().execute()).length, 2);
      await dropBoom(g.ctx.db, v.name, 'channels');
    } finally {
      await g.close();
    }
    await dropBoom(s.ctx.database.db, v.name, 'users');

    const again = await run();
    assert.equal(again.error, null, again.text);
    assert.equal(line(again.text, 'users'), 'users: read 4, imported 2, updated 0, unchanged 2, skipped 0');
    assert.equal(line(again.text, 'channels'), 'channels: read 4, imported 2, updated 0, unchanged 2, skipped 0');
    g = await openGateway(s, d.gatewayUrl);
    try {
      assert.equal((await g.ctx.db.selectFrom('channels').selectAll().execute()).length, 4);
      assert.equal((await g.ctx.db.selectFrom('abilities').selectAll().execute()).length, 4);
    } finally {
      await g.close();
    }
  });
});
