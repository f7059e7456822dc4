import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import bcrypt from 'bcryptjs';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, SESSION_SECRET, type AccountServer } from '../helpers/account.js';
import { runCli } from '../helpers/cli.js';
import { registerAccountCommands } from '../../src/account/cli.js';
import { databases, importCli } from './harness.js';

const PW = 'held user password 1';
const GOOD_TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const HELD = 'users held, disabled until an admin acts (their second factor was not imported)';
const BARE = 'users without a usable password';

/** A notice of the report: its "what to do" line and the rows it lists ([] when absent). */
function notice(report: string, heading: string): { action: string; rows: string[] } {
  const lines = report.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${heading}: `));
  if (at < 0) return { action: '', rows: [] };
  const rows: string[] = [];
  for (const l of lines.slice(at + 2)) {
    if (!l.startsWith('  ')) break;
    rows.push(l.trim());
  }
  assert.equal(lines[at], `${heading}: ${rows.length}`);
  return { action: lines[at + 1]!.replace(/^ {2}what to do: /, ''), rows };
}
const listed = (report: string, heading: string) => notice(report, heading).rows;

eachDatabase('import new-api: users without a password or whose second factor stayed behind', (v) => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  const run = (...args: string[]) => importCli(s, d, '--from', d.from, '--only', 'account', ...args);
  const user = (name: string) => s.ctx.database.db.selectFrom('users').selectAll().where('username', '=', name).executeTakeFirstOrThrow() as Promise<any>;
  const enable = (name: string) =>
    runCli(registerAccountCommands, { DATA_DIR: s.dataDir, ACCOUNT_DATABASE_URL: s.ctx.config.account.databaseUrl, SESSION_SECRET }, ['user', 'enable', '--username', name]);

  before(async () => {
    s = await startAccount(v);
    d = await databases(v, s);
    const { db, time, bool } = d.source;
    const hash = bcrypt.hashSync(PW, 4);
    const row = (id: number, username: string, password: string) => ({ id, username, password, role: 1, status: 1, aff_code: `h${id}`, created_at: 1 });
    await db.insertInto('users').values([
      row(1, 'ivan', '5f4dcc3b5aa765d61d8327deb882cf99'),
      row(2, 'judy', ''),
      row(3, 'ken', 'pbkdf2_sha256$600000$salt$hash='),
      row(4, 'lena', hash),
      row(5, 'max', hash),
      row(6, 'omar', hash),
    ]).execute();
    await db.insertInto('two_fas').values([
      { id: 1, user_id: 4, secret: 'not base32 at all!', is_enabled: bool(true), created_at: time(1), updated_at: time(1) },
      { id: 2, user_id: 5, secret: GOOD_TOTP, is_enabled: bool(true), created_at: time(1), updated_at: time(1) },
    ]).execute();
  });
  after(async () => {
    await d?.close();
    await s?.close();
  });

  test('the report names each user without a usable password and each held user, with what the admin does', async () => {
    const dry = await run('--dry-run');
    assert.equal(dry.error, null, dry.text);
    assert.deepEqual(listed(dry.text, HELD), ['lena (new-api id 4): undecodable 2FA secret in new-api']);
    const r = await run();
    assert.equal(r.error, null, r.text);
    assert.deepEqual(listed(r.text, BARE), [
      'ivan (new-api id 1): an MD5 hash (not accepted here)',
      'judy (new-api id 2): empty password',
      'ken (new-api id 3): a password hash of an unknown kind',
    ]);
    assert.match(notice(r.text, BARE).action, /reset email .* set a password or an email address in new-api and import again/);
    assert.deepEqual(listed(r.text, HELD), ['lena (new-api id 4): undecodable 2FA secret in new-api']);
    assert.match(notice(r.text, HELD).action, /^`npm run cli -- user enable --username NAME` lets the user sign in with the password and turns their API keys back on; have them set up 2FA again/);
    assert.ok(!r.text.includes('pbkdf2') && !r.text.includes('5f4dcc3b'), 'never a hash in the report');
    assert.deepEqual([(await user('lena')).status, (await user('max')).status, (await user('ivan')).password_hash], [2, 1, null]);
    assert.equal((await s.browser().login('lena', PW)).json.code, 'LOGIN_FAILED');
    assert.equal((await s.browser().login('ivan', 'password')).json.code, 'LOGIN_FAILED');
    const maxLogin = await s.browser().login('max', PW);
    assert.equal(maxLogin.json.data?.require_verification, true, maxLogin.text);
  });

  test('no run enables a held user, even when new-api disables and enables it again', async () => {
    await d.source.db.updateTable('users').set({ status: 2 }).where('id', '=', 4).execute();
    assert.equal((await run()).error, null);
    await d.source.db.updateTable('users').set({ status: 1, display_name: 'Lena L' }).where('id', '=', 4).execute();
    const r = await run();
    assert.match(r.text, /\nusers: read 6, imported 0, updated 1, /);
    assert.deepEqual([(await user('lena')).status, (await user('lena')).display_name], [2, 'Lena L']);
    assert.deepEqual(listed(r.text, HELD), ['lena (new-api id 4): undecodable 2FA secret in new-api']);
  });

  test('`user enable` is the way back; later runs leave the account enabled and stop naming it', async () => {
    const e = await enable('lena');
    assert.equal(e.error, null);
    assert.deepEqual(e.lines, ['user lena enabled']);
    assert.equal((await s.browser().login('lena', PW)).json.success, true);
    const r = await run();
    assert.equal((await user('lena')).status, 1);
    assert.deepEqual(listed(r.text, HELD), []);
    assert.ok(!r.text.includes('users held'), r.text);
  });

  test('a user imported earlier is held when its 2FA cannot come along; a fixed secret is imported, the account stays held', async () => {
    const before = await user('omar');
    const b = s.browser();
    assert.equal((await b.login('omar', PW)).json.success, true);
    await d.source.db.insertInto('two_fas').values({ id: 3, user_id: 6, secret: '!!', is_enabled: d.source.bool(true), created_at: d.source.time(1), updated_at: d.source.time(1) }).execute();
    let r = await run();
    const held = await user('omar');
    assert.deepEqual([held.status, held.auth_version], [2, before.auth_version + 1]);
    assert.deepEqual(listed(r.text, HELD), ['omar (new-api id 6): undecodable 2FA secret in new-api']);
    assert.equal((await b.get('/api/user/sessions')).status, 401, 'its sessions ended');

    await d.source.db.updateTable('two_fas').set({ secret: GOOD_TOTP }).where('id', '=', 3).execute();
    r = await run();
    assert.match(r.text, /\ntwo_fas: read 3, imported 1, /);
    assert.equal((await user('omar')).status, 2);
    assert.deepEqual(listed(r.text, HELD), ['omar (new-api id 6): 2FA secret imported since, the account still disabled']);
    await enable('omar');
    const login = await s.browser().login('omar', PW);
    assert.equal(login.json.data?.require_verification, true, login.text);
  });

  test('a password set in new-api comes over on the next run, and the user is no longer named', async () => {
    await d.source.db.updateTable('users').set({ password: bcrypt.hashSync('ivan new password', 4) }).where('id', '=', 1).execute();
    const r = await run();
    assert.deepEqual(listed(r.text, BARE), ['judy (new-api id 2): empty password', 'ken (new-api id 3): a password hash of an unknown kind']);
    assert.equal((await s.browser().login('ivan', 'ivan new password')).json.success, true);
  });
});
