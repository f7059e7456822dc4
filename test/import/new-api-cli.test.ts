import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { startAccount, SESSION_SECRET, type AccountServer } from '../helpers/account.js';
import { databases, importCli } from './harness.js';

const exec = promisify(execFile);

describe('import new-api: the command line', () => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  before(async () => {
    s = await startAccount({ name: 'sqlite' });
    d = await databases({ name: 'sqlite' }, s);
    await d.source.db.insertInto('users').values({ id: 1, username: 'zed', password: '$2a$04$abcdefghijklmnopqrstuu1234567890123456789012345678901', role: 1, status: 1, aff_code: 'z' }).execute();
  });
  after(async () => {
    await d?.close();
    await s?.close();
  });

  test('bad arguments are refused before anything is opened', async () => {
    const cases: [string[], RegExp][] = [
      [['--from', 'ftp://host/db'], /--from must be a SQLite file path or a sqlite:\/\/, postgres:\/\/ or mysql:\/\/ URL/],
      [['--from', d.from, '--only', 'billing'], /--only must be account, gateway or edge/],
      [['--from', d.from, '--batch-size', '0'], /--batch-size must be an integer 1-10000/],
      [['--from', d.from, '--logs-days', '7d'], /--logs-days must be an integer 1-3650/],
      [['--from', d.from, '--logs-days', '0'], /--logs-days must be an integer 1-3650/],
      [['--from', d.from, '--logs-days', '7', '--only', 'account'], /--logs-days belongs to the edge part: leave out --only or use --only edge/],
      [['--from', d.from, '--logs-from', d.from], /--logs-from needs --logs-days/],
      [['--from', `${s.dataDir}/missing.db`], /unable to open|does not exist|SQLITE_CANTOPEN|directory does not exist/i],
    ];
    for (const [args, message] of cases) {
      const r = await importCli(s, { gatewayUrl: `sqlite://${s.dataDir}/gateway.sqlite`, edgeUrl: `sqlite://${s.dataDir}/edge.sqlite` }, ...args);
      assert.match(r.error ?? '', message, args.join(' '));
    }
    assert.equal((await s.ctx.database.db.selectFrom('users').selectAll().execute()).length, 0);
  });

  test('a file without new-api\'s tables (an empty one here) exits 1 from the real entry point with a clear error; nothing is written', async () => {
    const empty = `${s.dataDir}/empty.db`;
    fs.writeFileSync(empty, '');
    const dir = `${s.dataDir}/fresh-gateway`;
    fs.mkdirSync(dir);
    await assert.rejects(
      exec(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'import', 'new-api', '--from', empty], {
        env: { ...process.env, DATA_DIR: dir, ACCOUNT_DATABASE_URL: s.ctx.config.account.databaseUrl, SESSION_SECRET, LOG_LEVEL: 'warn' },
      }),
      (e: any) => {
        assert.equal(e.code, 1);
        assert.match(e.stderr, /^error: the source has none of new-api's tables/);
        assert.equal(e.stdout, '');
        return true;
      },
    );
    assert.deepEqual(fs.readdirSync(dir), [], 'not even the gateway database was created');
    assert.equal(fs.statSync(empty).size, 0);
    assert.equal((await s.ctx.database.db.selectFrom('users').selectAll().execute()).length, 0);
  });

  test('npm run cli -- import new-api runs from the real entry point and exits 0; a table an older new-api lacks is reported', async () => {
    await d.source.db.schema.dropTable('passkey_credentials').execute();
    const out = await exec(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'import', 'new-api', '--from', d.from, '--dry-run', '--only', 'account'], {
      env: { ...process.env, DATA_DIR: s.dataDir, ACCOUNT_DATABASE_URL: s.ctx.config.account.databaseUrl, SESSION_SECRET, LOG_LEVEL: 'warn' },
    });
    assert.match(out.stdout, /^dry run: nothing was written/);
    assert.match(out.stdout, /\nusers: read 1, imported 1, updated 0, unchanged 0, skipped 0\n/);
    assert.match(out.stdout, /\npasskey_credentials: read 0, imported 0, updated 0, unchanged 0, skipped 0\n {2}not present in the source\n/);
    assert.ok(!out.stdout.includes('channels:'));
    assert.ok(!out.stdout.includes('$2a$'));
    assert.equal((await s.ctx.database.db.selectFrom('users').selectAll().execute()).length, 0);
  });
});
