import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { startAccount, SESSION_SECRET, type AccountServer } from './helpers/account.js';
import { tempDir } from './helpers/services.js';

const run = promisify(execFile);

async function cli(dataDir: string, ...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { ...process.env, DATA_DIR: dataDir, SESSION_SECRET, LOG_LEVEL: 'warn' },
  });
}

describe('operator CLI against a running server', () => {
  let s: AccountServer;
  const dataDir = tempDir();
  before(async () => {
    s = await startAccount({ name: 'sqlite' }, { dataDir });
  });
  after(() => s.close());

  test('user create, then the user logs in over HTTP', async () => {
    const out = await cli(dataDir, 'user', 'create', '--username', 'opsroot', '--password', 'ops root password', '--role', 'root');
    assert.match(out.stdout, /created user opsroot/);
    assert.ok(!out.stdout.includes('ops root password'));
    const r = await s.browser().login('opsroot', 'ops root password');
    assert.equal(r.json.success, true);
    assert.equal(r.json.data.user.role, 100);
  });

  test('set-role and disable end the sessions of a running server', async () => {
    await cli(dataDir, 'user', 'create', '--username', 'opsuser', '--password', 'ops user password');
    const b = s.browser();
    await b.login('opsuser', 'ops user password');
    assert.equal((await b.get('/api/user/sessions')).json.success, true);
    await cli(dataDir, 'user', 'set-role', '--username', 'opsuser', '--role', 'admin');
    await new Promise((r) => setTimeout(r, 1100)); // another process: the declared 1 s bound
    assert.equal((await b.get('/api/user/sessions')).status, 401);
    const again = s.browser();
    assert.equal((await again.login('opsuser', 'ops user password')).json.data.user.role, 10);
    await cli(dataDir, 'user', 'disable', '--username', 'opsuser');
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await again.get('/api/user/sessions')).status, 401);
    assert.equal((await s.browser().login('opsuser', 'ops user password')).json.code, 'LOGIN_FAILED');
  });

  test('token prints a personal access token on the last line', async () => {
    const out = await cli(dataDir, 'user', 'token', '--username', 'opsroot');
    const token = out.stdout.trim().split('\n').pop()!;
    assert.match(token, /^pat_/);
    const r = await s.browser().get('/api/user/sessions', { authorization: `Bearer ${token}` });
    assert.equal(r.json.code, 'AUTH_SESSION_REQUIRED', 'authenticates, but is not a browser session');
  });

  test('errors exit non-zero with a plain message', async () => {
    await assert.rejects(cli(dataDir, 'user', 'set-role', '--username', 'nobody', '--role', 'admin'), (e: any) => {
      assert.equal(e.code, 1);
      assert.match(e.stderr, /not found/);
      return true;
    });
    await assert.rejects(cli(dataDir, 'user', 'create', '--username', 'x1', '--password', 'long enough pw', '--role', 'king'), /--role must be one of/);
    await assert.rejects(cli(dataDir, 'user', 'create', '--username', 'x2', '--password', 'short'), /at least 8/);
  });

  test('manifest prints every operation as JSON', async () => {
    const out = await cli(dataDir, 'manifest');
    const manifest = JSON.parse(out.stdout);
    assert.ok(manifest.length >= 123);
    const a25 = manifest.find((m: any) => m.operation === 'A25');
    assert.equal(a25.state, 'implemented');
    assert.equal(a25.path, '/api/user/login');
  });
});
