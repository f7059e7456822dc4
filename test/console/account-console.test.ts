import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { browserSkip, launch, screenshot, virtualAuthenticator } from '../helpers/browser.js';

// The account console in headless Chromium against a real account server (SQLite): register, log in,
// enable TOTP, log out, log in with TOTP, register a passkey (virtual authenticator), passkey login on a
// second device, and revoke the first device's session from the sessions page.
let s: AccountServer;
let origin = '';
const skip = browserSkip;

before(async () => {
  if (skip) return;
  s = await startAccount({ name: 'sqlite' }, { env: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: 'http://localhost' } });
  // The page must be on http://localhost:<port> (the RP id); the port is known only after listen.
  origin = s.url.replace('127.0.0.1', 'localhost');
  s.ctx.config.passkey.origins.splice(0, Infinity, origin);
});

after(async () => {
  if (!skip) await s.close();
});

const totp = (secret: string, offsetMs = 0) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offsetMs });

async function login(page: Page, username: string, password: string) {
  await page.goto(origin + '/login');
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
}

test('account console: register, TOTP, passkey, sessions', { skip }, async () => {
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const page = await context.newPage();
    const { cdp, authenticatorId } = await virtualAuthenticator(context, page);

    // Unknown API paths keep their JSON envelope; client routes get the page.
    const api404 = await page.request.get(origin + '/api/nope', { headers: { accept: 'text/html' } });
    assert.equal(api404.status(), 404);
    assert.equal((await api404.json()).code, 'NOT_FOUND');

    // Register.
    await page.goto(origin + '/register');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill('alice password 1');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByText('Account created').waitFor();
    await screenshot(page, 'account-register');

    // A wrong password shows the catalog message and code, in the chosen language.
    await login(page, 'alice', 'wrong password!');
    await page.getByRole('alert').filter({ hasText: 'LOGIN_FAILED' }).waitFor();
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'LOGIN_FAILED' }).waitFor();
    assert.match(await page.getByRole('alert').innerText(), /[\u4e00-\u9fff]/, 'the error message is in Chinese');
    await screenshot(page, 'account-login-error-zh', { readme: true });
    await page.getByRole('button', { name: 'English' }).click();

    // Log in and enable TOTP (step-up with the password, then the code from the QR secret).
    await login(page, 'alice', 'alice password 1');
    await page.getByTestId('twofa-status').filter({ hasText: 'Not enabled' }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: 'Password' }).fill('alice password 1');
    await dialog.getByRole('button', { name: 'Verify' }).click();
    const secret = (await page.getByTestId('totp-secret').innerText()).trim();
    const backupCodes = (await page.getByTestId('backup-codes').innerText()).split(/\s+/).filter(Boolean);
    assert.equal(backupCodes.length, 4);
    await screenshot(page, 'account-totp-setup');
    await page.getByLabel('Code from the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByTestId('twofa-status').filter({ hasText: 'Enabled' }).waitFor();

    // Log out, log in again: the second step asks for the code (next time step: a code is accepted once).
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await login(page, 'alice', 'alice password 1');
    await page.getByRole('heading', { name: 'Second step' }).waitFor();
    await page.getByLabel('Authenticator code').fill(totp(secret, 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByTestId('twofa-status').filter({ hasText: 'Enabled' }).waitFor();

    // Register a passkey; the step-up takes a backup code.
    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await dialog.getByRole('textbox', { name: 'Authenticator or backup code' }).fill(backupCodes[0]);
    await dialog.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('Passkey registered.').waitFor();
    await page.getByTestId('passkey-status').filter({ hasText: 'Enabled' }).waitFor();
    await screenshot(page, 'account-security', { readme: true });

    // A second device holding the same passkey logs in with it, without password or second step.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    const other = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    const page2 = await other.newPage();
    const second = await virtualAuthenticator(other, page2);
    await second.cdp.send('WebAuthn.addCredential', { authenticatorId: second.authenticatorId, credential: credentials[0] });
    await page2.goto(origin + '/login');
    await page2.getByRole('button', { name: 'Log in with a passkey' }).click();
    await page2.getByTestId('twofa-status').waitFor();

    // Sessions page: this device is marked; revoke the first device's session.
    await page2.getByRole('link', { name: 'Login sessions' }).click();
    const rows = page2.locator('tbody tr');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    assert.equal(await rows.first().getAttribute('data-current'), 'true');
    await rows.first().getByText('This device').waitFor();
    assert.match(await rows.first().innerText(), /Passkey/);
    await screenshot(page2, 'account-sessions', { readme: true });
    await page2.locator('tr[data-current="false"]').getByRole('button', { name: /Revoke/ }).click();
    await page2.getByText('1 sessions revoked.').waitFor();
    // The list is read again after the revocation: wait for that render, then count.
    await page2.locator('tr[data-current="false"]').waitFor({ state: 'detached' });
    assert.equal(await rows.count(), 1);

    // The first device is signed out on its next request.
    await page.reload();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.equal(fs.existsSync('test-output/console/account-sessions.png'), true);
  } finally {
    await browser.close();
  }
});
