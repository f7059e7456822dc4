import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launch, virtualAuthenticator } from '../helpers/browser.js';
import { chat, startCustomerStack, type CustomerStack } from '../account/customers/stack.js';
import { codeAt } from '../account/twofactor-helpers.js';
import { ROLE } from '../../src/account/db.js';

// new-api's dashboard pages in headless Chromium against the account service with a co-hosted edge: the
// stand-in test/fixtures/reference-dashboard/pages.html makes the requests each page makes and reads what
// it reads, with the dashboard's error toasts. (new-api's own web/ is not built here: it needs its source,
// which this repository does not carry, and some 1,100 npm packages.) Sign-in, API keys (create), usage,
// wallet (redeem), pricing, the admin Users page, two-factor set up and turned off with codes alone, a
// passkey registered with the Chromium virtual authenticator from `options.publicKey`, and an admin page
// of the gateway console answered 501 with a message naming it.

const FIXTURE = fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/reference-dashboard/pages.html'), 'utf8');
const PAGE_PATH = '/reference-dashboard/pages';
const skip = fs.existsSync(CHROMIUM) ? false : `browser test skipped: ${CHROMIUM} is missing (CI installs it in .ci/run)`;

let c: CustomerStack;
let browser: Browser;
let origin = '';

before(async () => {
  if (skip) return;
  // The page is served at http://localhost:<port> (a WebAuthn RP id is a host name, not an IP address).
  const port = await freePort();
  origin = `http://localhost:${port}`;
  c = await startCustomerStack({ name: 'sqlite' }, { accountEnv: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: origin }, accountPort: port });
  await c.account.createUser('dash', 'dash password 1');
  await c.account.createUser('dash-admin', 'dash admin password 1', { role: ROLE.admin });
  browser = await launch();
});

after(async () => {
  if (skip) return;
  await browser.close();
  await c.close();
});

async function freePort() {
  const net = await import('node:net');
  return new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function open(username: string, password: string): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.route((url) => url.pathname === PAGE_PATH, (route) => route.fulfill({ contentType: 'text/html; charset=utf-8', body: FIXTURE }));
  await page.goto(origin + PAGE_PATH);
  assert.equal(await page.evaluate(([u, p]) => (window as any).dash.signIn(u, p), [username, password]), 'signed in');
  return page;
}

const run = <T>(page: Page, fn: string, ...args: unknown[]): Promise<T> => page.evaluate(([f, a]) => (window as any).dash[f as string](...(a as unknown[])), [fn, args] as const);
const toasts = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).dash.takeToasts());

test('a customer: API keys, usage, wallet and pricing open without an error toast, and their actions work', { skip }, async () => {
  const page = await open('dash', 'dash password 1');
  const keys = await run<any>(page, 'keysPage', 'laptop');
  assert.deepEqual(await toasts(page), []);
  assert.equal(keys.before, 0);
  assert.match(keys.key, /^(svc_sk_|sk-)/);
  assert.equal(keys.rows.length, 1);
  assert.equal(keys.rows[0].name, 'laptop');
  assert.equal(keys.rows[0].unlimited, true);
  assert.notEqual(keys.rows[0].key, keys.key, 'listed masked');

  // A top-up code made by the root admin, redeemed on the Wallet page; then one call on the edge with the key.
  const made = await c.root.post('/api/redemption/', { name: 'dash', quota: 200_000, count: 1 });
  assert.equal(made.json.success, true, made.text);
  const wallet = await run<any>(page, 'walletPage', made.json.data[0]);
  assert.deepEqual(await toasts(page), []);
  assert.equal(wallet.credited, 200_000);
  assert.equal(wallet.after - wallet.before, 200_000);
  assert.equal(wallet.onlineTopup, false);
  assert.match(wallet.aff, /\S/);
  assert.equal(wallet.history, 1);

  const call = await chat(c.st, keys.key);
  assert.equal(call.status, 200, call.text);
  const usage = await run<any>(page, 'usagePage');
  assert.deepEqual(await toasts(page), []);
  // The log lists the top-up and the call.
  assert.equal(usage.total, 2);
  const callRow = usage.rows.find((r: { model: string }) => r.model === 'gpt-4o');
  assert.equal(callRow.token, 'laptop');
  assert.ok(callRow.quota > 0 && callRow.prompt > 0);
  assert.equal(usage.quota, callRow.quota);

  const pricing = await run<any>(page, 'pricingPage');
  assert.deepEqual(await toasts(page), []);
  assert.ok(pricing.models.includes('gpt-4o'), JSON.stringify(pricing));
});

test('the profile page: two-factor set up and turned off with codes alone, a passkey registered from options.publicKey', { skip }, async () => {
  const page = await open('dash', 'dash password 1');
  await virtualAuthenticator(page.context(), page);
  // Right after the sign-in: no proof for adding factors.
  const passkey = await run<any>(page, 'passkeyRegister');
  assert.deepEqual(passkey, { registered: true, before: false });
  const setup = await run<any>(page, 'twoFactorSetup');
  assert.ok(setup, 'setup answered');
  // What the dashboard draws as the QR code: the otpauth URI, within a QR code's capacity.
  assert.match(setup.qr, /^otpauth:\/\/totp\//);
  assert.ok(setup.qr.length < 2953);
  assert.equal(setup.backupCodes, 4);
  assert.equal(await run(page, 'twoFactorEnable', codeAt(setup.secret)), true);
  // Turning it off takes the next code in the body as its proof (a used step is refused).
  assert.equal(await run(page, 'twoFactorDisable', codeAt(setup.secret)), false);
  assert.deepEqual(await toasts(page), ['Verification failed. Please try again.']);
  assert.equal(await run(page, 'twoFactorDisable', codeAt(setup.secret, 1)), true);
  assert.deepEqual(await toasts(page), []);
  // Read back: a password login now asks for the passkey as its second step, and no TOTP.
  const login = await c.account.browser().login('dash', 'dash password 1');
  assert.equal(login.json.data.require_verification, true);
  assert.deepEqual(login.json.data.methods, [{ method: 'passkey', available: true }]);
  assert.equal(login.json.data.require_2fa, undefined);
});

test('an admin: the Users page reads every row\'s counters; a gateway console page answers 501 naming it', { skip }, async () => {
  const page = await open('dash-admin', 'dash admin password 1');
  const rows = await run<string[]>(page, 'usersPage');
  assert.deepEqual(await toasts(page), []);
  assert.ok(rows.some((r) => /^dash \d[\d,]* \d[\d,]* \d[\d,]* default$/.test(r)), rows.join('\n'));
  assert.equal(await run(page, 'channelsPage'), '501 GATEWAY_CONSOLE_ONLY');
  const [message] = await toasts(page);
  assert.match(message!, /managed in the gateway console/);
});
