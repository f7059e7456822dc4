import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import type { Browser as HttpBrowser } from '../helpers/http.js';
import { ROLE } from '../../src/account/db.js';
import { chat, startCustomerStack, type CustomerStack } from '../account/customers/stack.js';

// The admin pages of the account console with the edge co-hosted: users (create, role, generated password,
// reset link, group, balance with a reason, usage, soft delete; the admin's own row and higher ranks offer nothing the
// server refuses), top-up codes (a batch shown once and exported, redeemer, disable, delete) and every user's
// usage with a user filter. Each change is read back through the API. English, 1280 px.
const skip = browserSkip;
let c: CustomerStack;
let ada: HttpBrowser;
let adaId = 0;
let cara: { b: HttpBrowser; id: number };

before(async () => {
  if (skip) return;
  c = await startCustomerStack({ name: 'sqlite' });
  adaId = await c.account.createUser('ada', 'ada password 1', { role: ROLE.admin });
  ada = c.account.browser();
  await ada.login('ada', 'ada password 1');
  cara = await c.customer('cara');
  assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: cara.id, quota: 1_000_000, reason: 'test credit' } })).json.success, true);
  const key = (await cara.b.post('/api/token/', { name: 'cara-key', unlimited_quota: true })).json.data.key;
  assert.equal((await chat(c.st, key)).status, 200);
});
after(async () => {
  if (!skip) await c.close();
});

async function signIn(page: Page, username: string, password: string) {
  await page.goto(c.account.url + '/login');
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.getByText(`Signed in as ${username}`).waitFor();
}

const user = async (id: number) => (await c.root.get(`/api/user/${id}`)).json;
const confirm = (page: Page, name: string) => page.getByRole('alertdialog').getByRole('button', { name, exact: true }).click();

test('account console: admin users — create, role, password, group, balance, usage, delete; own and higher rows offer nothing refused', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    await signIn(page, 'boss', 'boss password 1');
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'All users' }).waitFor();

    // Create.
    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('dialog', { name: 'New user' });
    await form.getByLabel('Username').fill('dan');
    await form.getByLabel('Password').fill('dan password 1');
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('User dan created.').waitFor();
    const dan = (await c.root.get('/api/user/search?keyword=dan')).json.data.items.find((u: any) => u.username === 'dan');
    assert.equal(dan.role, ROLE.user);
    assert.equal((await c.account.browser().login('dan', 'dan password 1')).json.success, true);

    // The root's own row: no disable; its panel offers the balance only among the account actions.
    assert.equal(await page.getByRole('button', { name: 'Disable boss' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Manage boss' }).click();
    const own = page.locator('[data-user-panel="boss"]');
    await own.getByRole('heading', { name: 'Balance' }).waitFor();
    for (const name of ['Make admin', 'Make common user', 'Reset password', 'Reset link', 'Delete user', 'Change group']) assert.equal(await own.getByRole('button', { name }).count(), 0, name);

    // Role, password, group, balance of dan.
    await page.getByRole('button', { name: 'Manage dan' }).click();
    const panel = page.locator('[data-user-panel="dan"]');
    await panel.getByRole('button', { name: 'Make admin' }).click();
    await page.getByText('dan is an admin now; their sessions have ended.').waitFor();
    assert.equal((await user(dan.id)).data.role, ROLE.admin);
    await panel.getByRole('button', { name: 'Make common user' }).click();
    await page.getByText('dan is a common user now; their sessions have ended.').waitFor();
    assert.equal((await user(dan.id)).data.role, ROLE.user);

    await panel.getByRole('button', { name: 'Reset password' }).click();
    await confirm(page, 'Reset password');
    const password = (await panel.getByTestId('new-password').innerText()).trim();
    assert.equal((await c.account.browser().login('dan', 'dan password 1')).json.success, false);
    assert.equal((await c.account.browser().login('dan', password)).json.success, true);

    // A reset link: opened signed out, dan chooses the password on the console's reset page (no address asked).
    await panel.getByRole('button', { name: 'Reset link' }).click();
    const link = (await panel.getByTestId('reset-link').innerText()).trim();
    assert.match(link, new RegExp(`/user/reset\\?user=${dan.id}&token=`));
    const outside = await browser.newPage({ viewport: { width: 390, height: 800 } });
    await outside.goto(link);
    assert.equal(await outside.getByLabel('Email').count(), 0);
    await outside.getByLabel('New password').fill('dan chosen pass 2');
    await outside.getByRole('button', { name: 'Reset password' }).click();
    await outside.getByText('Password changed. Log in with the new password.').waitFor();
    await outside.close();
    assert.equal((await c.account.browser().login('dan', password)).json.success, false);
    assert.equal((await c.account.browser().login('dan', 'dan chosen pass 2')).json.success, true);

    await panel.getByLabel('Group').fill('vip');
    await panel.getByRole('button', { name: 'Change group' }).click();
    await page.getByText('dan is in group vip now.').waitFor();
    assert.equal((await user(dan.id)).data.group, 'vip');
    await page.locator('tr[data-user="dan"] [data-col="group"]').getByText('vip').waitFor();

    await panel.getByLabel('Amount in USD').fill('2.5');
    await panel.getByLabel('Reason').fill('welcome credit');
    await panel.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('The balance of dan is $2.50 now.').waitFor();
    assert.equal((await user(dan.id)).data.quota, 1_250_000);
    await page.locator('tr[data-user="dan"] [data-col="balance"]').getByText('$2.50').waitFor();
    await panel.getByLabel('Change').selectOption('set');
    await panel.getByLabel('Amount in USD').fill('1');
    await panel.getByLabel('Reason').fill('correction');
    await panel.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('The balance of dan is $1.00 now.').waitFor();
    const edits = (await c.root.get('/api/log/?username=dan&type=3')).json.data.items.map((r: any) => r.content);
    assert.ok(edits.some((x: string) => x.includes('welcome credit')) && edits.some((x: string) => x.includes('correction')), String(edits));
    await screenshot(page, 'account-admin-user-panel');

    // Usage of cara from her panel.
    await page.getByRole('button', { name: 'Manage cara' }).click();
    await page.locator('[data-user-panel="cara"]').getByRole('button', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage of every user' }).waitFor();
    await page.locator('table.call-log tr[data-key-name="cara-key"]').waitFor();
    assert.equal(await page.locator('table.call-log tbody tr').count(), 1);
    await page.locator('[data-testid="by-user"] tr[data-key="cara"]').waitFor();
    await page.goBack();

    // Delete dan.
    await page.getByRole('button', { name: 'Manage dan' }).click();
    await panel.getByRole('button', { name: 'Delete user' }).click();
    await confirm(page, 'Delete');
    await page.locator('tr[data-user="dan"]').waitFor({ state: 'detached' });
    assert.equal((await user(dan.id)).code, 'USER_NOT_FOUND');

    // An admin: no Manage on their own row nor on the root's; the New user dialog offers the user role only.
    await page.getByRole('button', { name: 'Log out' }).click();
    await signIn(page, 'ada', 'ada password 1');
    await page.getByRole('link', { name: 'Users' }).click();
    await page.locator('tr[data-user="cara"]').getByRole('button', { name: 'Manage cara' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Manage ada' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Manage boss' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Disable boss' }).isDisabled(), true);
    assert.equal(await page.getByRole('button', { name: 'Disable ada' }).isDisabled(), true);
    await page.getByRole('button', { name: 'New user' }).click();
    assert.deepEqual(await page.getByRole('dialog').getByLabel('Role').locator('option').allInnerTexts(), ['User']);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  } finally {
    await browser.close();
  }
});

test('account console: top-up codes — a batch shown once and exported, redeemer, disable, delete', { skip }, async () => {
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, 'ada', 'ada password 1');
    await page.getByRole('link', { name: 'Top-up codes' }).click();
    await page.getByText('No codes.').waitFor();
    await page.getByRole('button', { name: 'New codes' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Name').fill('promo');
    await form.getByLabel('Amount of each code in USD').fill('1');
    await form.getByLabel('How many (1–100)').fill('3');
    await form.getByRole('button', { name: 'Create codes' }).click();
    const shown = page.getByRole('dialog', { name: '3 codes “promo” created' });
    const keys = (await shown.getByTestId('new-codes').innerText()).trim().split('\n');
    assert.equal(keys.length, 3);
    const [download] = await Promise.all([page.waitForEvent('download'), shown.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    assert.deepEqual(csv.slice(1).map((l) => l.split(',')[1]), keys);
    assert.match(csv[1]!, /^promo,[^,]+,1\.00,500000,$/);
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    const listed = (await ada.get('/api/redemption/?page_size=100')).json.data.items;
    assert.equal(listed.length, 3);
    assert.ok(listed.every((x: any) => !keys.includes(x.key)), 'the list shows keys masked');

    // cara redeems one: the list names her.
    assert.equal((await cara.b.post('/api/user/topup', { key: keys[0] })).json.data, 500_000);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const redeemed = page.locator('tr[data-code-name="promo"]').filter({ has: page.locator('[data-col="redeemer"]', { hasText: 'cara' }) });
    await redeemed.waitFor();
    assert.equal(await redeemed.locator('[data-col="status"]').innerText(), 'Redeemed');

    const [first, second] = listed.filter((x: any) => x.status === 1 && x.id !== undefined).slice(-2).map((x: any) => x.id);
    await page.getByRole('button', { name: `Disable promo (${first})` }).click();
    await page.getByText('Code promo is disabled: it can no longer be redeemed.').waitFor();
    const status = async (id: number) => (await ada.get('/api/redemption/?page_size=100')).json.data.items.find((x: any) => x.id === id)?.status;
    assert.equal(await status(first), 2);
    await page.getByRole('button', { name: `Delete promo (${second})` }).click();
    await confirm(page, 'Delete');
    await page.getByText('Code promo is deleted.').waitFor();
    assert.equal(await status(second), undefined);
    await screenshot(page, 'account-admin-codes');
  } finally {
    await browser.close();
  }
});
