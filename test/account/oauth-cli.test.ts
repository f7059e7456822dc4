import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { startAccount } from '../helpers/account.js';
import { tempDir } from '../helpers/services.js';

const run = promisify(execFile);
const dir = tempDir();
const file = path.join(dir, 'providers.json');

function cli(...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'oauth', ...args], {
    env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn', OAUTH_CUSTOM_PROVIDERS_FILE: file, SERVER_ADDRESS: 'https://dash.example.test' },
  });
}

after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('oauth add-provider / providers / remove-provider manage the custom providers file', async () => {
  const add = await cli(
    'add-provider',
    '--slug', 'acme',
    '--name', 'Acme SSO',
    '--client-id', 'acme-id',
    '--client-secret', 'acme-cli-secret',
    '--authorization-endpoint', 'https://sso.acme.example/authorize',
    '--token-endpoint', 'https://sso.acme.example/token',
    '--userinfo-endpoint', 'https://sso.acme.example/userinfo',
    '--user-id-field', 'sub',
  );
  assert.match(add.stdout, /saved provider acme/);
  assert.ok(!add.stdout.includes('acme-cli-secret'));
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);

  const list = await cli('providers');
  assert.match(list.stdout, /^acme\tAcme SSO\tenabled\thttps:\/\/dash\.example\.test\/oauth\/acme\tpkce$/m);
  assert.match(list.stdout, /^github\tGitHub\tdisabled\t/m);
  assert.ok(!list.stdout.includes('acme-cli-secret'));

  const s = await startAccount({ name: 'sqlite' }, { env: { OAUTH_CUSTOM_PROVIDERS_FILE: file } });
  try {
    const r = await s.browser().post('/api/oauth/state', { provider: 'acme', intent: 'login' });
    assert.equal(r.json.success, true, r.text);
    const u = new URL(r.json.data.authorization_url);
    assert.equal(u.origin + u.pathname, 'https://sso.acme.example/authorize');
    assert.equal(u.searchParams.get('client_id'), 'acme-id');
  } finally {
    await s.close();
  }

  await assert.rejects(
    cli('add-provider', '--slug', 'github', '--client-id', 'x', '--client-secret', 'y', '--authorization-endpoint', 'https://a.example/a', '--token-endpoint', 'https://a.example/t', '--userinfo-endpoint', 'https://a.example/u'),
    (e: { stderr: string }) => /reserved/.test(e.stderr),
  );
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).length, 1, 'a refused change leaves the file as it was');

  assert.match((await cli('remove-provider', '--slug', 'acme')).stdout, /removed provider acme/);
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), []);
  await assert.rejects(cli('remove-provider', '--slug', 'acme'));
});
