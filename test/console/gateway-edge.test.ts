import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import * as OTPAuth from 'otpauth';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';

// The Edge tab of the gateway console with the edge co-hosted (GS22–GS34): public models created, edited
// and switched off, a key issued behind a TOTP step-up and shown once, then revoked in the console's own
// dialog, a wallet credited, an owner's usage by day and model, webhooks added, replayed and removed; every
// change read back through the API. Then Chinese, a 390 px phone, and a gateway without the edge.
let s: Stack;
let root: StaffClient;
let totp: string;
const skip = browserSkip;

before(async () => {
  if (skip) return;
  s = await startStack({ name: 'sqlite' });
  root = await s.gateway.staff('ops', 'root');
  totp = (await s.gateway.services.staff.enrollTotp('ops')).secret;
});
after(async () => {
  if (skip) return;
  await s.close();
});

/** A code the gateway accepts now (a code is taken once per 30-second step: the last step is forgotten first). */
async function code() {
  await s.gateway.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).where('name', '=', 'ops').execute();
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(totp) }).generate();
}

const row = (page: Page, id: string) => page.locator(`tr[data-id="${id}"]`);
const section = (page: Page, name: string) => page.getByRole('link', { name, exact: true });

async function fitsPhone(page: Page, what: string) {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `${what}: the page is ${width} px wide`);
}

test('gateway console Edge tab: models, keys with step-up, wallets, usage, webhooks; Chinese; 390 px', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, s.gateway.url + '/', root.token!);
    await page.getByRole('link', { name: 'Edge', exact: true }).click();
    await page.getByRole('heading', { name: 'Edge: machine clients' }).waitFor();
    await page.getByText('Public admission: controlled').waitFor();

    // Public models: create, edit, disable.
    await page.getByRole('heading', { name: 'Public models' }).waitFor();
    await page.getByRole('button', { name: 'New public model' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Public model id').fill('chat-pro');
    await dialog.getByLabel('Reserve (units)').fill('2000');
    await dialog.getByLabel('Gateway model').fill('gpt-4o');
    await dialog.getByLabel('Overdraft (units)').fill('300');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row(page, 'chat-pro').waitFor();
    await page.getByRole('button', { name: 'New public model' }).click();
    await dialog.getByLabel('Public model id').fill('spare');
    await dialog.getByLabel('Reserve (units)').fill('10');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row(page, 'spare').waitFor();
    await row(page, 'chat-pro').getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('Reserve (units)').fill('2500');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row(page, 'chat-pro').getByText('2,500').waitFor();
    await row(page, 'spare').getByRole('button', { name: 'Disable' }).click();
    await row(page, 'spare').getByText('Disabled').waitFor();
    const models = (await root.get('/api/edge/models')).json.data;
    assert.deepEqual(
      models.map((m: any) => [m.public_model_id, m.reserve_amount, m.gateway_model, m.group, m.overdraft, m.enabled]),
      [['chat-pro', 2500, 'gpt-4o', 'default', 300, true], ['spare', 10, null, 'default', 0, false]],
    );
    assert.doesNotMatch(await page.locator('main').innerText(), /reserve_amount|public_model_id|GS2\d|GS3\d/, 'no raw field names or operation ids');
    await screenshot(page, 'gateway-edge-models');

    // Wallets: crediting an owner that does not exist yet asks first; Cancel creates nothing.
    await section(page, 'Wallets').click();
    await page.getByRole('heading', { name: 'Wallets' }).waitFor();
    await page.getByRole('button', { name: 'Credit' }).first().click();
    await dialog.getByLabel('Owner').fill('acme');
    await dialog.getByLabel('Amount (units)').fill('1000000');
    await dialog.getByText('= 2 USD').waitFor();
    await dialog.getByRole('button', { name: 'Credit' }).click();
    const confirm = page.getByRole('alertdialog');
    await confirm.getByRole('heading', { name: 'Create owner acme?' }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual((await root.get('/api/edge/wallets')).json.data, [], 'nothing created on Cancel');
    await dialog.getByRole('button', { name: 'Credit' }).click();
    await confirm.getByRole('button', { name: 'Create owner' }).click();
    await page.getByText('Wallet of acme: balance 1,000,000 units (2 USD).').waitFor();
    // USD beside the units.
    await row(page, 'acme').locator('td').nth(1).getByText('2 USD').waitFor();
    assert.match(await row(page, 'acme').locator('td').nth(1).innerText(), /^1,000,000\s+2 USD$/);
    assert.equal((await root.get('/api/edge/wallets')).json.data[0].balance, 1_000_000);
    // A known owner is offered, and crediting it again asks nothing.
    await row(page, 'acme').getByRole('button', { name: 'Credit' }).click();
    assert.deepEqual(await dialog.getByTestId('edge-owner-options').locator('option').evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value)), ['acme']);
    await dialog.getByLabel('Amount (units)').fill('250000');
    await dialog.getByRole('button', { name: 'Credit' }).click();
    await page.getByText('Wallet of acme: balance 1,250,000 units (2.5 USD).').waitFor();
    assert.equal(await confirm.count(), 0);
    assert.equal((await root.get('/api/edge/wallets')).json.data[0].balance, 1_250_000);
    await screenshot(page, 'gateway-edge-wallets');

    // Keys: issuing needs the authenticator code; the key is shown once.
    await section(page, 'Developer keys').click();
    await page.getByRole('heading', { name: 'Developer keys' }).waitFor();
    await page.getByRole('button', { name: 'Issue a key' }).click();
    // A new name asks before the code is spent; Cancel issues nothing.
    await dialog.getByLabel('Owner', { exact: true }).fill('newco');
    await dialog.getByLabel('Authenticator code').fill('000000');
    await dialog.getByRole('button', { name: 'Issue a key' }).click();
    await confirm.getByRole('heading', { name: 'Create owner newco?' }).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual((await root.get('/api/edge/keys')).json.data, []);
    assert.equal(await dialog.getByRole('alert').count(), 0, 'the code was not tried');
    await dialog.getByLabel('Owner', { exact: true }).fill('acme');
    await dialog.getByRole('button', { name: 'Issue a key' }).click();
    await dialog.getByRole('alert').getByText('The verification code is invalid or already used').waitFor();
    await dialog.getByLabel('Authenticator code').fill(await code());
    await dialog.getByRole('button', { name: 'Issue a key' }).click();
    await dialog.getByRole('heading', { name: 'Key for acme' }).waitFor();
    const key = (await dialog.getByTestId('edge-secret').innerText()).trim();
    assert.match(key, /^svc_sk_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    await dialog.getByRole('button', { name: 'Copy' }).waitFor();
    await screenshot(page, 'gateway-edge-key-once');
    await dialog.getByRole('button', { name: 'Close' }).last().click();
    const keys = (await root.get('/api/edge/keys?owner=acme')).json.data;
    assert.equal(keys.length, 1);
    await row(page, keys[0].key_id).getByText('Active').waitFor();
    assert.ok(!(await page.content()).includes(key), 'the key is gone once the dialog is closed');

    // The key works at the edge: a call that the usage page then shows.
    assert.deepEqual((await s.edge.request('GET', '/v1/models', { token: key })).json.data.map((m: any) => m.id), ['chat-pro']);
    const chat = await s.edge.request('POST', '/v1/chat/completions', { token: key, body: { model: 'chat-pro', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(chat.status, 200, chat.text);

    await section(page, 'Usage').click();
    await page.getByLabel('Owner').fill('acme');
    await page.getByLabel('Days back').fill('7');
    await page.getByRole('button', { name: 'Show' }).click();
    const today = new Date().toISOString().slice(0, 10);
    const line = row(page, `${today} chat-pro`);
    await line.waitFor();
    assert.match(await line.innerText(), new RegExp(`${today}\\s+chat-pro\\s+1\\s+0\\s+100\\s+20\\s+${CHAT_COST}`));
    await row(page, 'total').waitFor();
    assert.equal((await root.get('/api/edge/usage?owner=acme&days=7')).json.data.lines[0].cost, CHAT_COST);

    // The relay log names the owner (its subject edge:owner-<id> on hover), in the page and the API.
    await s.gateway.relay!.log.flush();
    const relayRows = (await root.get('/api/relay/log')).json.data.items;
    assert.deepEqual(relayRows.map((r: any) => [r.caller, r.caller_name]), [[relayRows[0].caller, 'acme']]);
    assert.match(relayRows[0].caller, /^edge:owner-\d+$/);
    await page.getByRole('link', { name: 'Relay', exact: true }).click();
    const caller = page.locator('table.relay-log tbody td.caller').first();
    await caller.getByText('acme', { exact: true }).waitFor();
    assert.equal(await caller.locator('span[title]').getAttribute('title'), relayRows[0].caller);
    assert.ok(!(await caller.innerText()).includes('edge:owner'), 'the subject is not shown');
    // The usage chart split by caller names the owner too.
    const byCaller = (await root.get(`/api/relay/usage?start_time=${Date.now() - 3600_000}&by=caller`)).json.data;
    assert.deepEqual(byCaller.caller_names, { [relayRows[0].caller]: 'acme' });
    await page.getByLabel('Split by').selectOption('caller');
    await page.locator('figure.chart .u-legend', { hasText: 'acme' }).waitFor();
    assert.ok(!(await page.locator('figure.chart .u-legend').innerText()).includes('edge:owner'));
    await screenshot(page, 'gateway-edge-relay-owner');
    await page.getByRole('link', { name: 'Edge', exact: true }).click();

    // Revoke in the console's own dialog; Cancel first changes nothing.
    await section(page, 'Developer keys').click();
    await row(page, keys[0].key_id).getByRole('button', { name: 'Revoke' }).click();
    await confirm.getByText(`Calls with key ${keys[0].key_id} of acme are refused at once.`).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await root.get('/api/edge/keys')).json.data[0].revoked_at, null);
    await row(page, keys[0].key_id).getByRole('button', { name: 'Revoke' }).click();
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(`Key ${keys[0].key_id} revoked.`).waitFor();
    assert.notEqual((await root.get('/api/edge/keys')).json.data[0].revoked_at, null);
    assert.equal((await s.edge.request('GET', '/v1/models', { token: key })).status, 401);

    // Webhooks: add (step-up, secret once), replay, remove.
    await section(page, 'Webhooks').click();
    await page.getByRole('button', { name: 'Add an endpoint' }).click();
    await dialog.getByLabel('Owner', { exact: true }).fill('acme');
    await dialog.getByLabel('URL').fill('https://hooks.example.test/edge');
    await dialog.getByLabel('Authenticator code').fill(await code());
    await dialog.getByRole('button', { name: 'Add an endpoint' }).click();
    await dialog.getByRole('heading', { name: 'Signing secret of the endpoint for acme' }).waitFor();
    assert.ok((await dialog.getByTestId('edge-secret').innerText()).trim().length > 20);
    await dialog.getByRole('button', { name: 'Close' }).last().click();
    const hooks = (await root.get('/api/edge/webhooks')).json.data;
    assert.deepEqual(hooks.map((h: any) => [h.owner, h.url, h.removed_at]), [['acme', 'https://hooks.example.test/edge', null]]);
    await row(page, hooks[0].endpoint_id).getByText('Active').waitFor();
    await page.getByLabel('From sequence number').fill('0');
    await page.getByRole('button', { name: 'Replay events' }).click();
    await page.getByText(/^\d+ event\(s\), \d+ delivery\(ies\) queued\.$/).waitFor();
    await page.getByLabel('From sequence number').fill('');
    await page.getByLabel('Event id').fill('no-such-event');
    await page.getByRole('button', { name: 'Replay events' }).click();
    await page.getByText('No event with this id').waitFor();
    await row(page, hooks[0].endpoint_id).getByRole('button', { name: 'Remove' }).click();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('Endpoint removed.').waitFor();
    assert.notEqual((await root.get('/api/edge/webhooks')).json.data[0].removed_at, null);
    await screenshot(page, 'gateway-edge-webhooks');

    // The audit log names each of these writes in words, in English and Chinese.
    await page.getByRole('link', { name: 'Audit log', exact: true }).click();
    const actions = page.locator('table.audit-table tbody td[data-label="Action"]');
    await actions.first().waitFor();
    const named = await actions.allInnerTexts();
    for (const name of ['Edge public model saved', 'Edge wallet credited', 'Edge key issued', 'Edge key revoked', 'Edge webhook endpoint added', 'Edge events replayed', 'Edge webhook endpoint removed']) assert.ok(named.includes(name), `${name} in ${named.join(' | ')}`);
    assert.ok(!named.some((n) => n.startsWith('Request ')), named.join(' | '));
    await page.getByRole('button', { name: '中文' }).click();
    await page.locator('table.audit-table tbody tr').getByText('边缘钱包充值').first().waitFor();
    await page.getByLabel('操作', { exact: true }).selectOption('GS29');
    await page.getByRole('button', { name: '应用' }).click();
    await page.getByText('第 1 页 · 共 2 条').waitFor();
    assert.equal((await root.get('/api/staff/audit?action=GS29')).json.data.total, 2);
    await screenshot(page, 'gateway-audit-edge-zh');
    await page.getByRole('link', { name: '边缘服务', exact: true }).click();

    // Chinese texts on every section.
    await page.getByRole('heading', { name: '边缘服务：机器客户端' }).waitFor();
    for (const [link, heading] of [
      ['公开模型', '公开模型'],
      ['开发者密钥', '开发者密钥'],
      ['钱包', '钱包'],
      ['用量', '用量'],
      ['Webhook', 'Webhook'],
    ]) {
      await section(page, link).click();
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    }
    await page.getByRole('columnheader', { name: '所有者' }).first().waitFor();
    await section(page, '钱包').click();
    await page.getByRole('columnheader', { name: '可用' }).waitFor();
    await row(page, 'acme').locator('td').nth(1).getByText(/^[\d.]+ 美元$/).waitFor();
    await screenshot(page, 'gateway-edge-zh');
    await page.getByRole('button', { name: 'English' }).click();

    // A 390 px phone: every section keeps the page's width; wide tables scroll inside their box.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const name of ['Public models', 'Developer keys', 'Wallets', 'Usage', 'Webhooks']) {
      await section(page, name).click();
      await page.getByRole('heading', { name, exact: true }).waitFor();
      await fitsPhone(page, name);
    }
    await section(page, 'Public models').click();
    await page.getByRole('button', { name: 'New public model' }).click();
    await dialog.getByLabel('Public model id').waitFor();
    await fitsPhone(page, 'the model dialog');
    await screenshot(page, 'gateway-edge-phone');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  } finally {
    await browser.close();
  }
});

test('gateway console Edge tab without the edge in the process: a clear notice', { skip }, async () => {
  let g: GatewayServer | undefined;
  const browser = await launch();
  try {
    g = await startGateway({ name: 'sqlite' });
    const solo = await g.staff('solo', 'root');
    const page = await signedInGatewayPage(browser, g.url + '/edge', solo.token!);
    await page.getByTestId('edge-not-served').getByText('The edge is not running in this process').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Public models' }).count(), 0);
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByTestId('edge-not-served').getByText('此进程未运行边缘服务').waitFor();

    // Without the edge here an edge caller has no name: the relay log shows its subject as it is.
    await g.ctx.db
      .insertInto('relay_log')
      .values({ created_at: Date.now(), request_id: 'r-1', caller: 'edge:owner-1', caller_group: 'default', format: 'chat', stream: 0, model: 'm', upstream_model: 'm', channel_id: null, key_index: null, status: 200, error_code: null, prompt_tokens: 1, completion_tokens: 1, cached_tokens: 0, reasoning_tokens: 0, quota: 1, cost: 0, first_byte_ms: null, total_ms: 5, retries: 0, attempts: '[]', usage_counted: 0, error_detail: null })
      .execute();
    assert.deepEqual((await solo.get('/api/relay/log')).json.data.items.map((r: any) => [r.caller, r.caller_name]), [['edge:owner-1', null]]);
    await page.getByRole('link', { name: '转发', exact: true }).click();
    await page.locator('table.relay-log tbody td.caller').getByText('edge:owner-1').waitFor();
    await page.getByRole('link', { name: '边缘服务', exact: true }).click();
    await page.getByTestId('edge-not-served').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsPhone(page, 'the notice');
    await screenshot(page, 'gateway-edge-not-served');
  } finally {
    await browser.close();
    await g?.close();
  }
});
