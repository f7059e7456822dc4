import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { databases, importCli, line, openEdge, openGateway } from './harness.js';

eachDatabase('import new-api: a source that is not (all of) a new-api database', (v) => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  const run = (...args: string[]) => importCli(s, d, '--from', d.from, ...args);
  const drop = (table: string) => d.source.db.schema.dropTable(table).execute();

  /** Nothing of the source arrived: no user, channel, wallet or import map row anywhere. */
  async function nothingWritten() {
    assert.equal((await s.ctx.database.db.selectFrom('users').selectAll().execute()).length, 0);
    assert.equal((await s.ctx.database.db.selectFrom('import_map' as any).selectAll().execute()).length, 0);
    const g = await openGateway(s, d.gatewayUrl);
    try {
      assert.equal((await g.ctx.db.selectFrom('channels').selectAll().execute()).length, 0);
      assert.equal((await g.ctx.db.selectFrom('import_map' as any).selectAll().execute()).length, 0);
    } finally {
      await g.close();
    }
    const e = await openEdge(s, d.edgeUrl);
    try {
      assert.equal((await e.db.selectFrom('edge_owners').selectAll().execute()).length, 0);
      assert.equal((await e.db.selectFrom('import_map' as any).selectAll().execute()).length, 0);
    } finally {
      await e.close();
    }
  }

  before(async () => {
    s = await startAccount(v);
    d = await databases(v, s);
    await d.source.db.insertInto('users').values({ id: 1, username: 'uma', password: '', role: 1, status: 1, aff_code: 'u1' }).execute();
    await d.source.db.insertInto('channels').values({ id: 1, type: 1, key: 'sk-tables-1', status: 1, name: 'c1', models: 'm1', group: 'default', channel_info: '{}' }).execute();
  });
  after(async () => {
    await d?.close();
    await s?.close();
  });

  test('without the channels table: an error naming it, nothing written; --only account imports the users', async () => {
    await drop('abilities');
    await drop('channels');
    for (const args of [[], ['--dry-run'], ['--only', 'gateway']]) {
      const r = await run(...args);
      assert.match(r.error ?? '', /^the source has no channels table, so it is not a whole new-api database; nothing was imported/, args.join(' '));
      assert.ok(!r.text.includes('import finished') && !r.text.includes('dry run'), r.text);
    }
    assert.match((await run()).error!, /\(--only account imports its users alone\)$/);
    await nothingWritten();
    const r = await run('--only', 'account', '--dry-run');
    assert.equal(r.error, null, r.text);
    assert.equal(line(r.text, 'users'), 'users: read 1, imported 1, updated 0, unchanged 0, skipped 0');
  });

  test('without the users table: an error naming it, nothing written', async () => {
    await drop('users');
    for (const args of [[], ['--only', 'account']]) {
      const r = await run(...args);
      assert.match(r.error ?? '', /^the source has no users table, so it is not a whole new-api database; nothing was imported/, args.join(' '));
    }
    assert.match((await run()).error!, /\(--only gateway imports its channels alone\)$/);
    await nothingWritten();
  });

  test("with none of new-api's tables: an error, nothing written", async () => {
    for (const t of ['two_fas', 'two_fa_backup_codes', 'passkey_credentials', 'custom_oauth_providers', 'user_oauth_bindings', 'tokens', 'redemptions', 'logs']) await drop(t);
    await sql.raw('CREATE TABLE notes (id integer PRIMARY KEY, body text)').execute(d.source.db);
    for (const args of [[], ['--dry-run'], ['--only', 'gateway']]) {
      const r = await run(...args);
      assert.match(r.error ?? '', /^the source has none of new-api's tables \(users, channels, …\): check that --from names new-api's database; nothing was imported$/, args.join(' '));
      assert.equal(r.text, '');
    }
    await nothingWritten();
  });
});
