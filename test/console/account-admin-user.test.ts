import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import { ROLE } from '../../src/account/db.js';
import { enrolTotp } from '../account/twofactor-helpers.js';

// The admin user page of the account console: shown to admins only; two-factor statistics (A16), a user's
// linked accounts (A20) with unlinking (A21), clearing a binding by type (A19), turning off two-factor (A18)
// and resetting the passkey (A22). Each change is read back through the API.
let s: AccountServer;
let targetId = 0;
let adminId = 0;
const skip = browserSkip;

before(async () => {
  if (skip) return;
  s = await startAccount({ name: 'sqlite' });
  adminId = await s.createUser('root1', 'root password 1', { role: ROLE.admin });
  await s.createUser('plain', 'plain password 1');
  targetId = await s.createUser('tess', 'tess password 1');
  await enrolTotp(s, 'tess', 'tess password 1');
  await (s.ctx.database.db as any).updateTable('users').set({ github_id: 'gh-77', telegram_id: '7070' }).where('id', '=', targetId).execute();
});

after(async () => {
  if (!skip) await s.close();
});

async function login(page: Page, username: string, password: string) {
  await page.goto(s.url + '/login');
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.getByText(`Signed in as ${username}`).waitFor();
}

test('account console: admin user page (A16, A18-A22), admins only', { skip }, async () => {
  const admin = s.browser();
  await admin.login('root1', 'root password 1');
  const bindingsOf = async () => (await admin.get(`/api/user/${targetId}/oauth/bindings`)).json.data.map((b: any) => b.provider_id).sort();
  const browser = await launch();
  try {
    // A plain user has no Users tab, and the address shows the security page instead.
    const userPage = await browser.newPage();
    await login(userPage, 'plain', 'plain password 1');
    assert.equal(await userPage.getByRole('link', { name: 'Users' }).count(), 0);
    await userPage.goto(s.url + '/admin/users');
    await userPage.getByRole('heading', { name: 'Linked accounts' }).waitFor();
    assert.equal(await userPage.getByLabel('User id').count(), 0);

    const page = await browser.newPage();
    // Each change asks first in the console's own dialog.
    const confirmed = async (button: string) => {
      await page.getByRole('button', { name: button }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    };
    await login(page, 'root1', 'root password 1');
    await page.getByRole('link', { name: 'Users' }).click();
    const stats = (await admin.get('/api/user/2fa/stats')).json.data;
    await page.locator('.figures [data-key="enabled_rate"] dd').getByText(stats.enabled_rate).waitFor();
    assert.equal(await page.locator('.figures [data-key="total_users"] dd').innerText(), String(stats.total_users));

    await page.getByLabel('User id').fill(String(targetId));
    await page.getByRole('button', { name: 'Open' }).click();
    await page.locator('li[data-provider="github"]').getByText('gh-77').waitFor();

    // Unlink GitHub (A21), clear Telegram by type (A19).
    await page.locator('li[data-provider="github"]').getByRole('button', { name: 'Unlink' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('GitHub unlinked.').waitFor();
    await page.locator('li[data-provider="github"]').waitFor({ state: 'detached' });
    assert.deepEqual(await bindingsOf(), ['telegram']);
    await page.getByLabel('Binding type').selectOption('telegram');
    await confirmed('Clear binding');
    await page.getByText('Telegram binding of tess cleared.').waitFor();
    assert.deepEqual(await bindingsOf(), []);

    // Two-factor off (A18); a second attempt shows the catalog code; no passkey to reset (A22).
    await confirmed('Turn off two-factor');
    await page.getByText(`Two-factor of user ${targetId} is off.`).waitFor();
    assert.equal((await admin.get('/api/user/2fa/stats')).json.data.enabled_users, stats.enabled_users - 1);
    assert.match((await s.browser().login('tess', 'tess password 1')).json.data.access_token, /^ey/);
    await confirmed('Turn off two-factor');
    await page.getByRole('alert').filter({ hasText: 'USER_TWOFA_NOT_ENABLED' }).waitFor();
    await confirmed('Reset passkey');
    await page.getByRole('alert').filter({ hasText: 'PASSKEY_NOT_REGISTERED' }).waitFor();

    // An admin may not act on itself (outranking), shown with its code.
    await page.getByLabel('User id').fill(String(adminId));
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('alert').filter({ hasText: 'USER_OUTRANKED' }).first().waitFor();
    await screenshot(page, 'account-admin-user');
  } finally {
    await browser.close();
  }
});
