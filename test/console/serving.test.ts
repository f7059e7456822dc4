import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startAccount } from '../helpers/account.js';
import { startGateway } from '../helpers/gateway.js';
import { tempDir } from '../helpers/services.js';

// How each service serves its console build (CONSOLE_DIR), on a small stand-in build made here: the page
// for client routes, hashed assets, and never for the API or the operations endpoints.
function fakeBuild() {
  const dir = tempDir('console-');
  for (const name of ['account', 'gateway']) {
    fs.mkdirSync(path.join(dir, name, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(dir, name, 'index.html'), `<!doctype html><title>${name}</title><!--console-settings--><script type="module" src="/assets/app-1.js"></script>`);
    fs.writeFileSync(path.join(dir, name, 'assets', 'app-1.js'), `console.log(${JSON.stringify(name)});`);
  }
  return dir;
}

const html = { accept: 'text/html,application/xhtml+xml' };

test('the account service serves its console at / with public settings, and keeps API 404s as JSON', async () => {
  const dir = fakeBuild();
  const s = await startAccount({ name: 'sqlite' }, { env: { CONSOLE_DIR: dir, GITHUB_CLIENT_ID: 'gh-client', GITHUB_CLIENT_SECRET: 'gh-secret-value' } });
  try {
    for (const p of ['/', '/login', '/oauth/github?code=x&state=y', '/user/reset?email=a%40b.c&token=t']) {
      const r = await fetch(s.url + p, { headers: html });
      assert.equal(r.status, 200, p);
      assert.match(r.headers.get('content-type')!, /text\/html/);
      assert.match(r.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      const body = await r.text();
      assert.match(body, /<title>account<\/title>/);
      const settings = JSON.parse(/<script type="application\/json" id="console-settings">(.*?)<\/script>/.exec(body)![1]);
      assert.deepEqual(settings.oauth, [{ slug: 'github', name: 'GitHub' }]);
      assert.equal(settings.passkey, false);
      assert.ok(!body.includes('gh-secret-value') && !body.includes('gh-client'), 'no client id or secret in the page');
    }
    const asset = await fetch(s.url + '/assets/app-1.js');
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('cache-control')!, /immutable/);
    assert.equal(await asset.text(), 'console.log("account");');
    // The API, health and metrics paths never fall back to the page, whatever the Accept header says.
    for (const p of ['/api/nope', '/api/user/nope/deeper', '/healthz/x', '/metrics/x', '/assets/missing.js']) {
      const r = await fetch(s.url + p, { headers: html });
      assert.equal(r.status, 404, p);
      assert.equal((await r.json()).code, 'NOT_FOUND', p);
    }
    assert.equal((await fetch(s.url + '/healthz', { headers: html })).status, 200);
    // A client that does not ask for HTML (an API client, curl) gets the JSON 404 for unknown paths.
    const plain = await fetch(s.url + '/login');
    assert.equal(plain.status, 404);
    assert.equal((await plain.json()).code, 'NOT_FOUND');
    const api = await fetch(s.url + '/api/user/login/encryption-key', { headers: html });
    assert.equal((await api.json()).success, true);
  } finally {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the gateway serves its own console build; without a build both services start without one', async () => {
  const dir = fakeBuild();
  const gw = await startGateway({ name: 'sqlite' }, { env: { CONSOLE_DIR: dir } });
  try {
    const r = await fetch(gw.url + '/channels', { headers: html });
    assert.equal(r.status, 200);
    assert.match(await r.text(), /<title>gateway<\/title>/);
    assert.equal((await fetch(gw.url + '/api/channel/', { headers: html })).status, 401);
  } finally {
    await gw.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const empty = tempDir('console-empty-');
  const s = await startAccount({ name: 'sqlite' }, { env: { CONSOLE_DIR: empty } });
  const g = await startGateway({ name: 'sqlite' }, { env: { CONSOLE_DIR: empty } });
  try {
    for (const url of [s.url, g.url]) {
      const r = await fetch(url + '/', { headers: html });
      assert.equal(r.status, 404);
      assert.equal((await r.json()).code, 'NOT_FOUND');
    }
    assert.match(s.log.text(), /web console disabled/);
    assert.match(g.log.text(), /web console disabled/);
  } finally {
    await s.close();
    await g.close();
    fs.rmSync(empty, { recursive: true, force: true });
  }
});
