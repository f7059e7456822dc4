import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Request } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { CHROMIUM, launch, screenshot } from '../helpers/browser.js';
import { eachDatabase } from '../helpers/services.js';
import { codeAt, enrolTotp } from '../account/twofactor-helpers.js';

// A page in headless Chromium that sends new-api's dashboard requests (test/fixtures/reference-dashboard,
// a stand-in written for this suite) against a real account server: status and setup on load, password
// login answered with require_2fa, the code alone to /api/user/login/2fa (the pending login in a cookie),
// the own profile, and a password change after which the page recovers through a refresh.

const FIXTURE = fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/reference-dashboard/index.html'), 'utf8');
const PAGE_PATH = '/reference-dashboard/';
const skip = fs.existsSync(CHROMIUM) ? false : `browser test skipped: ${CHROMIUM} is missing (CI installs it in .ci/run)`;

interface Sent {
  method: string;
  path: string;
  body: string | null;
  headers: Record<string, string>;
}

eachDatabase('new-api\'s dashboard requests from a browser page', (v) => {
  let s: AccountServer;
  let secret = '';
  before(async () => {
    if (skip) return;
    s = await startAccount(v, { env: { SYSTEM_NAME: 'Dashboard Test', PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: '127.0.0.1', PASSKEY_ORIGINS: 'http://127.0.0.1' } });
    await s.createUser('dash', 'dash password 1', { email: 'dash@example.com' });
    secret = (await enrolTotp(s, 'dash', 'dash password 1')).secret;
  });
  after(async () => {
    if (!skip) await s.close();
  });

  test('status, login with require_2fa then /api/user/login/2fa {code}, /api/user/self, password change', { skip }, async () => {
    const browser = await launch();
    try {
      const page = await browser.newPage();
      await page.route((url) => url.pathname === PAGE_PATH, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: FIXTURE }));
      const sent: Sent[] = [];
      const pending: Promise<void>[] = [];
      page.on('request', (req: Request) => {
        const url = new URL(req.url());
        if (!url.pathname.startsWith('/api/')) return;
        pending.push(req.allHeaders().then((headers) => void sent.push({ method: req.method(), path: url.pathname + url.search, body: req.postData(), headers })));
      });
      const find = async (method: string, p: string) => {
        await Promise.all(pending);
        return sent.filter((r) => r.method === method && r.path === p);
      };

      await page.goto(s.url + PAGE_PATH);
      await page.locator('#system-name').filter({ hasText: 'Dashboard Test' }).waitFor();
      assert.equal(await page.locator('#sign-in-options').innerText(), 'password passkey');
      const [status] = await find('GET', '/api/status');
      assert.equal(status.headers['new-api-user'], '-1');
      assert.equal(status.headers['cache-control'], 'no-store');
      assert.equal((await find('GET', '/api/setup')).length, 1);

      // Password first: require_2fa, and the page asks for the code.
      await page.getByLabel('Username').fill('dash');
      await page.getByLabel('Password', { exact: true }).fill('dash password 1');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('status').filter({ hasText: 'Enter the code of your authenticator' }).waitFor();
      const [login] = await find('POST', '/api/user/login?turnstile=');
      assert.deepEqual(JSON.parse(login.body!), { username: 'dash', password: 'dash password 1' });

      // The code alone; the pending login rides in its cookie.
      const code = codeAt(secret);
      await page.getByLabel('Authenticator code').fill(code);
      await page.getByRole('button', { name: 'Verify and log in' }).click();
      await page.locator('#profile-username').filter({ hasText: 'dash' }).waitFor();
      const [second] = await find('POST', '/api/user/login/2fa');
      assert.deepEqual(JSON.parse(second.body!), { code });
      assert.match(second.headers.cookie ?? '', /new_api_pending_login=/);
      assert.equal(second.headers['content-type'], 'application/json');
      const [self] = await find('GET', '/api/user/self');
      const userId = JSON.parse(await page.evaluate(() => localStorage.getItem('user') ?? '{}')).id;
      assert.equal(self.headers['new-api-user'], String(userId));
      assert.match(self.headers.authorization ?? '', /^Bearer ey/);
      assert.equal(await page.locator('#profile-display-name').innerText(), 'dash');
      await screenshot(page, 'reference-dashboard-signed-in');

      // Password change: old password and new one; the next call recovers with a refresh (its token rotated).
      await page.getByLabel('Original password').fill('dash password 1');
      await page.getByLabel('New password').fill('dash password 2');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('status').filter({ hasText: 'Password changed; profile reloaded' }).waitFor();
      const [change] = await find('PUT', '/api/user/self');
      assert.deepEqual(JSON.parse(change.body!), { original_password: 'dash password 1', password: 'dash password 2' });
      assert.equal((await find('POST', '/api/user/auth/refresh')).length, 1);
      assert.equal((await find('GET', '/api/user/self')).length, 3, 'the profile read, its 401 after the change, and the retry');

      const old = await s.browser().post('/api/user/login', { username: 'dash', password: 'dash password 1' });
      assert.equal(old.json.code, 'LOGIN_FAILED');
      const fresh = await s.browser().post('/api/user/login', { username: 'dash', password: 'dash password 2' });
      assert.equal(fresh.json.data.require_2fa, true);
    } finally {
      await browser.close();
    }
  });
});
