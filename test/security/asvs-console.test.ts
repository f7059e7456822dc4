// OWASP ASVS 5.0 items about the user interface (6.2.6, 6.2.7, 7.4.4): the account console in headless
// Chromium against a real account server; see docs/security.md.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser as Chromium, Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { browserSkip, launch } from '../helpers/browser.js';

const skip = browserSkip;
let s: AccountServer;
let chromium: Chromium;
const PASSWORD = 'console asvs password';

before(async () => {
  if (skip) return;
  s = await startAccount({ name: 'sqlite' });
  await s.createUser('viewer', PASSWORD);
  chromium = await launch();
});
after(async () => {
  if (skip) return;
  await chromium.close();
  await s.close();
});

async function page(): Promise<Page> {
  return (await chromium.newContext()).newPage();
}

/** The password inputs of the current page: their type and autocomplete. */
function passwordInputs(p: Page) {
  return p.locator('input[name*="password"]').evaluateAll((els) =>
    els.map((e) => ({ name: e.getAttribute('name'), type: e.getAttribute('type'), autocomplete: e.getAttribute('autocomplete') })),
  );
}

async function logIn(p: Page) {
  await p.goto(s.url + '/login');
  await p.getByLabel('Username or email').fill('viewer');
  await p.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await p.getByRole('button', { name: 'Log in', exact: true }).click();
  await p.getByRole('button', { name: 'Log out' }).waitFor();
}

test('ASVS 6.2.6 every password field of the console is type=password', { skip }, async () => {
  const p = await page();
  const seen: { name: string | null; type: string | null }[] = [];
  for (const path of ['/login', '/register', '/user/reset?email=a%40example.com&token=abc']) {
    await p.goto(s.url + path);
    await p.locator('input[name*="password"]').first().waitFor();
    seen.push(...(await passwordInputs(p)));
  }
  // The step-up dialog asks for the password too.
  await logIn(p);
  await p.getByRole('button', { name: 'Set up two-factor authentication' }).click();
  await p.getByRole('dialog').locator('input[name*="password"]').waitFor();
  seen.push(...(await passwordInputs(p)));
  assert.ok(seen.length >= 4, JSON.stringify(seen));
  for (const input of seen) assert.equal(input.type, 'password', JSON.stringify(input));
});

test('ASVS 6.2.7 paste works and password fields invite password managers', { skip }, async () => {
  const p = await page();
  await p.goto(s.url + '/login');
  const field = p.getByLabel('Password', { exact: true });
  const prevented = await field.evaluate((el) => {
    const data = new DataTransfer();
    data.setData('text/plain', 'pasted');
    const event = new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true });
    el.dispatchEvent(event);
    return event.defaultPrevented;
  });
  assert.equal(prevented, false, 'the page does not block paste');
  for (const path of ['/login', '/register']) {
    await p.goto(s.url + path);
    await p.locator('input[name*="password"]').first().waitFor();
    for (const input of await passwordInputs(p)) assert.match(input.autocomplete ?? '', /^(current|new)-password$/, JSON.stringify(input));
  }
  // Text inserted the way a password manager or the clipboard does logs in.
  await p.goto(s.url + '/login');
  await p.getByLabel('Username or email').fill('viewer');
  await p.getByLabel('Password', { exact: true }).focus();
  await p.keyboard.insertText(PASSWORD);
  await p.getByRole('button', { name: 'Log in', exact: true }).click();
  await p.getByRole('button', { name: 'Log out' }).waitFor();
});

test('ASVS 7.4.4 every signed-in page of the console shows Log out', { skip }, async () => {
  const active = async () => (await s.ctx.database.db.selectFrom('user_sessions').select('sid').where('status', '=', 'active').execute()).length;
  const before = await active();
  const p = await page();
  await logIn(p);
  assert.equal(await active(), before + 1);
  for (const link of ['Login sessions', 'Security']) {
    await p.getByRole('link', { name: link }).click();
    assert.equal(await p.getByRole('button', { name: 'Log out' }).isVisible(), true, link);
  }
  await p.getByRole('button', { name: 'Log out' }).click();
  await p.getByRole('heading', { name: 'Log in' }).waitFor();
  assert.equal(await active(), before, 'logging out ended the session on the server');
});
