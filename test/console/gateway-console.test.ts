import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';

// The gateway console in headless Chromium against a real gateway (SQLite): staff sign-in with a token,
// create channels (single and batch), search, edit, disable, and reveal a key behind TOTP verification.
let gw: GatewayServer;
let root: StaffClient;
let secret = '';
const skip = browserSkip;
const KEY = 'sk-alpha-0123456789abcdef';

before(async () => {
  if (skip) return;
  gw = await startGateway({ name: 'sqlite' });
  root = await gw.staff('ops', 'root');
  secret = (await gw.services.staff.enrollTotp('ops')).secret;
});

after(async () => {
  if (!skip) await gw.close();
});

test('gateway console: sign in, create, search, edit, disable, reveal key', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(gw.url + '/');

    // A wrong token is refused with the catalog's code; the right one opens the channels table.
    await page.getByLabel('Staff token').fill('gwst_not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'GW_UNAUTHORIZED' }).waitFor();
    await screenshot(page, 'gateway-sign-in');
    await page.getByLabel('Staff token').fill(root.token!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Channels' }).waitFor();

    // Create one channel, then two more in batch mode (one per key).
    const dialog = page.getByRole('dialog');
    await page.getByRole('button', { name: 'New channel' }).click();
    await dialog.getByLabel('Name').fill('alpha');
    await dialog.getByLabel('Key', { exact: true }).fill(KEY);
    await dialog.getByLabel('Models (comma-separated)').fill('gpt-4o,gpt-4o-mini');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Created 1 channel(s).').waitFor();
    await page.getByRole('button', { name: 'New channel' }).click();
    await dialog.getByLabel('Create mode').selectOption('batch');
    await dialog.getByLabel('Name').fill('beta');
    await dialog.getByLabel('Key', { exact: true }).fill('sk-beta-1\nsk-beta-2');
    await dialog.getByLabel('Models (comma-separated)').fill('claude-3');
    await dialog.getByLabel('Type').selectOption('14');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Created 2 channel(s).').waitFor();
    const rows = page.locator('tbody tr');
    await rows.nth(2).waitFor();
    assert.equal(await rows.count(), 3);
    await page.getByText('Anthropic: 2').waitFor(); // type counts

    // Search narrows the table to the matching channel.
    await page.getByLabel('Keyword (name, tag, base URL, id)').fill('alpha');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Page 1 · 1 in all').waitFor();
    assert.equal(await rows.count(), 1);
    const row = rows.first();
    const id = Number(await row.getAttribute('data-id'));

    // Edit the name and priority.
    await row.getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('Name').fill('alpha-edited');
    await dialog.getByLabel('Priority').fill('5');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved alpha-edited.').waitFor();
    await row.getByText('alpha-edited').waitFor();

    // Disable it.
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByText('Disabled').waitFor();
    const stored = (await root.get(`/api/channel/${id}`)).json.data;
    assert.equal(stored.name, 'alpha-edited');
    assert.equal(stored.priority, 5);
    assert.equal(stored.status, 2);
    assert.equal(stored.key, '', 'the list and get views never carry the key');
    await page.getByLabel('Keyword (name, tag, base URL, id)').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Page 1 · 3 in all').waitFor();
    await page.locator('.table-scroll').evaluate((box) => (box.scrollLeft = 0));
    await screenshot(page, 'gateway-channels', { readme: true });

    // Reveal the key: a wrong code is refused, the right one shows the key once.
    await page.locator(`tr[data-id="${id}"]`).getByRole('button', { name: 'Reveal key' }).click();
    await dialog.getByLabel('Authenticator code').fill('000000');
    await dialog.getByRole('button', { name: 'Verify and reveal' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'GW_VERIFY_CODE_INVALID' }).waitFor();
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();
    await dialog.getByLabel('Authenticator code').fill(code);
    await dialog.getByRole('button', { name: 'Verify and reveal' }).click();
    assert.equal((await page.getByTestId('revealed-key').innerText()).trim(), KEY);
    await screenshot(page, 'gateway-reveal-key', { readme: true });
  } finally {
    await browser.close();
  }
});
