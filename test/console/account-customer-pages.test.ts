import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import type { Browser as HttpBrowser } from '../helpers/http.js';
import { CHAT_COST } from '../helpers/stack.js';
import { chat, startCustomerStack, type CustomerStack } from '../account/customers/stack.js';
import { operations } from '../../src/contract/operations.js';

// The customer's pages of the account console against the account service with the edge co-hosted (a
// gateway and a fake OpenAI upstream behind it): API keys (create with every setting, the key shown once with
// its snippets, edit, disable/enable, delete, batch delete), the wallet (redeem a code, history), usage
// (charts, the call log's filters, CSV), pricing, the playground (streamed through /pg/chat/completions with the
// session, billed under playground-default) and the profile. Each change is read back through the API. English, 1280 px; the other languages,
// widths and themes are walked in account-pages-walk*.test.ts.
const skip = browserSkip;
let c: CustomerStack;
let cora: { b: HttpBrowser; id: number };
const PASSWORD = 'cora password 1';

before(async () => {
  if (skip) return;
  c = await startCustomerStack({ name: 'sqlite' });
  cora = await c.customer('cora');
  assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: cora.id, quota: 1_000_000, reason: 'test credit' } })).json.success, true);
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

const tokens = async () => (await cora.b.get('/api/token/?page_size=100')).json.data.items as any[];
const balance = async () => (await cora.b.get('/api/user/self')).json.data.quota as number;
const confirm = (page: Page, name: string) => page.getByRole('alertdialog').getByRole('button', { name, exact: true }).click();

test('account console: API keys — create with settings, shown once with snippets, edit, disable, delete, batch delete', { skip }, async () => {
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, 'cora', PASSWORD);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No keys yet: create one to call the models.').waitFor();

    await page.getByRole('button', { name: 'New key' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Name').fill('sdk');
    await form.getByLabel('Expires').selectOption('30');
    await form.getByLabel('Unlimited (the wallet is the only limit)').uncheck();
    await form.getByLabel('Limit in USD').fill('1.5');
    await form.getByLabel('Only these models').check();
    await form.getByLabel('gpt-4o').check();
    await form.getByLabel('Allowed IP addresses').fill('127.0.0.1, ::1');
    await form.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key sdk created' });
    const secret = (await shown.getByTestId('new-key').innerText()).trim();
    assert.ok(secret.length >= 20, secret);
    const [created] = await tokens();
    assert.deepEqual([created.name, created.remain_quota, created.unlimited_quota, created.model_limits_enabled, created.model_limits, created.allow_ips], ['sdk', 750_000, false, true, 'gpt-4o', '127.0.0.1, ::1']);
    assert.ok(Math.abs(created.expired_time - (Date.now() / 1000 + 30 * 86400)) < 120, String(created.expired_time));
    assert.notEqual(created.key, secret, 'reads show the key masked');
    // The snippets carry the edge's base URL and the key.
    const snippet = shown.locator('pre.snippet');
    assert.match(await snippet.innerText(), new RegExp(`curl ${c.st.edge.url}/v1/chat/completions`));
    assert.ok((await snippet.innerText()).includes(`Bearer ${secret}`));
    await shown.getByRole('button', { name: 'OpenAI SDK (Python)' }).click();
    assert.ok((await snippet.innerText()).includes(`OpenAI(base_url="${c.st.edge.url}/v1", api_key="${secret}")`));
    assert.match(await snippet.innerText(), /model="gpt-4o"/);
    // Claude Code's snippet is offered exactly when the edge serves Anthropic's Messages API.
    const anthropic = operations.some((o) => o.deployable === 'edge' && o.method === 'POST' && o.path === '/v1/messages');
    assert.equal(JSON.parse((await page.locator('#console-settings').textContent())!).edge_anthropic, anthropic);
    assert.equal(await shown.getByRole('button', { name: 'Claude Code / Anthropic SDK' }).count(), anthropic ? 1 : 0);
    if (anthropic) {
      await shown.getByRole('button', { name: 'Claude Code / Anthropic SDK' }).click();
      assert.ok((await snippet.innerText()).includes(`export ANTHROPIC_BASE_URL=${c.st.edge.url}\nexport ANTHROPIC_AUTH_TOKEN=${secret}`));
    }
    await shown.getByRole('button', { name: 'Copy', exact: true }).click();
    await shown.getByText(/^(Copied|Copy failed)/).waitFor();
    await screenshot(page, 'account-key-created');
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await shown.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret), 'the key is gone from the page once closed');

    // The key works at the edge; the list shows what it spent and when.
    assert.equal((await chat(c.st, secret)).status, 200);
    await page.reload();
    const row = page.locator('tr[data-key-name="sdk"]');
    await row.locator('[data-col="used"] [data-units="320"]').waitFor();
    assert.equal(await row.locator('[data-col="used"]').innerText(), '$0.00064');
    assert.equal(await row.locator('[data-col="remaining"] .money').getAttribute('title'), `${(750_000 - CHAT_COST).toLocaleString('en')} units`);
    assert.notEqual(await row.locator('td').nth(7).innerText(), 'Never');

    // Edit: a new name, unlimited.
    await page.getByRole('button', { name: 'Edit sdk' }).click();
    await form.getByLabel('Name').fill('sdk-2');
    await form.getByLabel('Unlimited (the wallet is the only limit)').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Key saved.').waitFor();
    const edited = (await tokens())[0];
    assert.deepEqual([edited.name, edited.unlimited_quota, edited.model_limits], ['sdk-2', true, 'gpt-4o']);

    // Disable: the edge refuses it; enable again.
    await page.getByRole('button', { name: 'Disable sdk-2' }).click();
    await page.getByText('sdk-2 is disabled: calls with it are refused.').waitFor();
    assert.equal((await tokens())[0].status, 2);
    assert.notEqual((await chat(c.st, secret)).status, 200);
    await page.getByRole('button', { name: 'Enable sdk-2' }).click();
    await page.getByText('sdk-2 is enabled.').waitFor();
    assert.equal((await tokens())[0].status, 1);

    // Batch delete two keys; then delete the last one from its row.
    for (const name of ['batch-a', 'batch-b']) assert.equal((await cora.b.post('/api/token/', { name, unlimited_quota: true })).json.success, true);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByLabel('Select batch-a').check();
    await page.getByLabel('Select batch-b').check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('alertdialog', { name: 'Delete 2 keys?' }).waitFor();
    await confirm(page, 'Delete');
    await page.getByText('2 keys deleted.').waitFor();
    assert.deepEqual((await tokens()).map((k) => k.name), ['sdk-2']);
    await page.getByRole('button', { name: 'Delete sdk-2' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await tokens()).length, 1, 'Cancel deletes nothing');
    await page.getByRole('button', { name: 'Delete sdk-2' }).click();
    await confirm(page, 'Delete');
    await page.getByText('No keys yet: create one to call the models.').waitFor();
    assert.deepEqual(await tokens(), []);
  } finally {
    await browser.close();
  }
});

test('account console: wallet, usage, pricing, playground and profile', { skip }, async () => {
  const key = (await cora.b.post('/api/token/', { name: 'cli', unlimited_quota: true })).json.data.key as string;
  for (let i = 0; i < 2; i++) assert.equal((await chat(c.st, key)).status, 200);
  const [code] = (await c.root.post('/api/redemption/', { name: 'gift', quota: 500_000, count: 1 })).json.data as string[];
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, 'cora', PASSWORD);

    // Wallet: the balance in USD with its units; a code redeemed once; the history.
    await page.getByRole('link', { name: 'Wallet' }).click();
    const before = await balance();
    const shown = page.getByTestId('balance');
    await shown.waitFor();
    assert.equal(await shown.getAttribute('title'), `${before.toLocaleString('en')} units`);
    await page.getByRole('textbox', { name: 'Top-up code' }).fill(code!);
    await page.getByRole('button', { name: 'Redeem', exact: true }).click();
    await page.getByText('$1.00 added to your balance.').waitFor();
    assert.equal(await balance(), before + 500_000);
    await page.locator(`[data-testid="balance"][data-units="${before + 500_000}"]`).waitFor();
    await page.getByRole('textbox', { name: 'Top-up code' }).fill(code!);
    await page.getByRole('button', { name: 'Redeem', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'TOPUP_CODE_INVALID' }).waitFor();
    assert.equal(await balance(), before + 500_000, 'a code credits once');
    await page.locator('table.history tr[data-type="1"]').first().waitFor();
    await page.locator('table.history tr[data-type="2"]').first().waitFor();
    await screenshot(page, 'account-wallet');

    // Usage: totals, the chart, by model; the log with a filter; CSV.
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await page.locator('figure.chart canvas').first().waitFor();
    assert.equal(await page.locator('.figures [data-key="calls"] dd').innerText(), '3', 'the first test\'s call and these two');
    await page.locator('[data-testid="by-model"] tr[data-key="gpt-4o"]').waitFor();
    await page.locator('table.call-log tr[data-model="gpt-4o"]').nth(1).waitFor();
    await page.getByLabel('Key', { exact: true }).fill('nope');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No calls match.').waitFor();
    await page.getByLabel('Key', { exact: true }).fill('cli');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('table.call-log tr[data-key-name="cli"]').nth(1).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    assert.equal(csv[0], 'time,key,model,type,prompt_tokens,completion_tokens,cost_usd,units,duration_s,stream,request_id');
    assert.equal(csv.length, 3);
    assert.match(csv[1]!, /,cli,gpt-4o,2,100,20,0\.000640,320,/);
    await screenshot(page, 'account-usage');

    // Pricing: gpt-4o at model ratio 2, completion ratio 3 in group default (ratio 1).
    await page.getByRole('link', { name: 'Pricing' }).click();
    const price = page.locator('tr[data-model="gpt-4o"]');
    await price.waitFor();
    assert.deepEqual([await price.locator('[data-col="input"]').innerText(), await price.locator('[data-col="output"]').innerText()], ['$4', '$12']);
    await page.getByLabel('Search models').fill('claude');
    await page.getByText('No model matches.').waitFor();

    // Playground: no key, the session; a streamed answer through /pg/chat/completions, billed like any call.
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.locator('select[name="model"] option').first().waitFor({ state: 'attached' });
    assert.equal(await page.getByLabel('API key').count(), 0, 'no key field');
    const spent = await balance();
    const keys = (await tokens()).length;
    const [sent] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/pg/chat/completions')),
      (async () => {
        await page.getByLabel('Message').fill('Hi there');
        await page.getByRole('button', { name: 'Send' }).click();
      })(),
    ]);
    assert.equal(new URL(sent.url()).origin, c.account.url, 'the page calls its own origin');
    assert.equal(JSON.parse(sent.postData()!).stream, true);
    await page.locator('li.msg.assistant .text').getByText('Hello there').waitFor();
    await page.getByTestId('pg-usage').getByText('Last answer: 100 tokens in, 20 tokens out.').waitFor();
    for (let i = 0; i < 50 && (await balance()) === spent; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await balance(), spent - CHAT_COST, 'the playground call is charged to the wallet');
    assert.equal((await tokens()).length, keys, 'no key was made for it');
    const [row] = (await cora.b.get('/api/log/self?type=2')).json.data.items;
    assert.deepEqual([row.token_name, row.model_name, row.is_stream], ['playground-default', 'gpt-4o', true]);
    await screenshot(page, 'account-playground');

    // Profile: the display name, then the password (this session continues).
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByLabel('Display name').fill('Cora C.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Display name saved.').waitFor();
    assert.equal((await cora.b.get('/api/user/self')).json.data.display_name, 'Cora C.');
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill('cora new password 2');
    await page.getByLabel('New password again').fill('cora new password 2');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed; your other sessions have ended.').waitFor();
    assert.equal((await c.account.browser().login('cora', 'cora new password 2')).json.success, true);
    await page.getByRole('link', { name: 'Wallet' }).click();
    await page.getByTestId('balance').waitFor();
  } finally {
    await browser.close();
  }
});
