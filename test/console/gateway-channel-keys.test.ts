import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The keys of a multi-key channel in the gateway console (G21): told apart by index, the start the API
// shows, status, and why and when a key was disabled (a test-all run disables a bad key); each key tested on
// its own, disabled, filtered and deleted after the console's own confirmation; keys appended through the
// editor with the hint of its mode; the revealed key copied to the clipboard. Desktop and a 390 px phone,
// English and Chinese; every change read back through the API, and no key ever in the page.
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
let secret = '';
let id = 0;
const skip = browserSkip;
const KEYS = ['sk-multi-aaaa1111', 'sk-nope-bbbb2222', 'sk-multi-cccc3333'];
const ADDED = 'sk-multi-dddd4444';

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'POST /mk/v1/chat/completions': (r, res) => {
      if (!String(r.headers.authorization ?? '').startsWith('Bearer sk-multi-')) return sendJson(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    },
  });
  gw = await startGateway({ name: 'sqlite' }, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_AUTO_DISABLE_CHANNEL: 'true' } });
  root = await gw.staff('ops', 'root');
  secret = (await gw.services.staff.enrollTotp('ops')).secret;
  const r = await root.post('/api/channel/', { mode: 'multi_to_single', multi_key_mode: 'polling', channel: { name: 'pool', type: 1, key: KEYS.join('\n'), models: 'gpt-4o', base_url: `${up.url}/mk`, group: 'default' } });
  assert.equal(r.status, 200, r.text);
  id = r.json.data.ids[0];
  // Test all: the bad key is disabled automatically, with the upstream's reason.
  let job = (await root.get('/api/channel/test')).json.data;
  while (job.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 100));
    job = (await root.get(`/api/system_task/${job.task_id}`)).json.data;
  }
  assert.equal(job.status, 'succeeded', JSON.stringify(job));
});

after(async () => {
  if (!skip) {
    for (const k of [...KEYS, ADDED]) assert.ok(!gw.log.text().includes(k), `key ${k} in the log`);
    await gw.close();
    await up.close();
  }
});

const keyStatus = async () => (await root.post('/api/channel/multi_key/manage', { channel_id: id, action: 'get_key_status', page: 1, page_size: 50 })).json.data;

test('gateway console multi-key: keys told apart, tested, disabled, deleted; keys appended; the revealed key copied', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    page.on('dialog', (d) => assert.fail(`a browser dialog opened: ${d.message()}`));
    const row = page.locator(`tr[data-id="${id}"]`);
    await row.locator('td.col-status').getByText('3 keys').waitFor();
    await row.getByRole('button', { name: 'Keys' }).click();
    const dialog = page.getByRole('dialog', { name: 'Keys of pool' });
    const key = (i: number) => dialog.locator(`tr[data-index="${i}"]`);
    await key(2).waitFor();

    // Each key: its index, the start the API shows (never more), status, why and when it was disabled.
    const api = await keyStatus();
    for (const k of api.keys) {
      assert.equal(await key(k.index).locator('td').nth(0).innerText(), k.key_preview);
      const [head, tail] = k.key_preview.split('...');
      assert.ok(KEYS[k.index]!.startsWith(head) && KEYS[k.index]!.endsWith(tail), k.key_preview);
    }
    assert.deepEqual(api.keys.map((k: any) => k.status), [1, 3, 1]);
    assert.equal(await key(1).locator('td').nth(1).innerText(), 'Auto-disabled');
    await key(1).getByText('invalid_api_key: Incorrect API key provided').waitFor();
    await key(1).getByText('just now').waitFor();
    assert.equal(await key(0).locator('td').nth(2).innerText(), '—');
    await dialog.getByText('2 enabled').waitFor();
    await dialog.getByText('1 disabled automatically').waitFor();
    const html = await page.content();
    for (const k of KEYS) assert.ok(!html.includes(k), 'a key is in the page');

    // Each key is tested on its own: the bad one fails with the upstream's message, a good one passes.
    await key(1).getByRole('button', { name: 'Test' }).click();
    await key(1).locator('.upstream-message').getByText('Incorrect API key provided').waitFor();
    assert.equal(await key(1).getAttribute('class'), 'test-failed');
    await key(0).getByRole('button', { name: 'Test' }).click();
    await key(0).getByText(/^Passed \d+ ms$/).waitFor();

    // Disable key #2 by hand.
    await key(2).getByRole('button', { name: 'Disable' }).click();
    await dialog.getByRole('status').getByText('Key #2 disabled.').waitFor();
    await key(2).getByText('By hand').waitFor();
    assert.equal((await keyStatus()).keys[2].status, 2);
    await screenshot(page, 'gateway-channel-keys');

    // Chinese on a 390 px phone: the same keys, reasons in Chinese, the dialog fits.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await row.getByRole('button', { name: '密钥管理' }).click();
    const zh = page.getByRole('dialog', { name: 'pool 的密钥' });
    await zh.getByText('手动禁用 1').waitFor();
    await zh.locator('tr[data-index="2"]').getByText('手动操作').waitFor();
    assert.equal(await zh.locator('tr[data-index="1"] td').nth(1).innerText(), '自动禁用');
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, dialog: document.querySelector('dialog')!.getBoundingClientRect().right }));
    assert.ok(widths.page <= 390 && widths.dialog <= 390, JSON.stringify(widths));
    await screenshot(page, 'gateway-channel-keys-phone-zh');
    await zh.getByRole('button', { name: '关闭' }).click();
    await page.getByRole('button', { name: 'English' }).click();
    await page.setViewportSize({ width: 1280, height: 900 });
    await row.getByRole('button', { name: 'Keys' }).click();
    await key(2).waitFor();

    // Filter by status.
    await dialog.getByLabel('Status', { exact: true }).selectOption('3');
    await dialog.locator('tbody tr').first().waitFor();
    await key(0).waitFor({ state: 'detached' });
    assert.deepEqual(await dialog.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-index'))), ['1']);
    await dialog.getByLabel('Status', { exact: true }).selectOption('');
    await key(2).waitFor();

    // Deleting a key asks first, in the console's own dialog; the keys after it move up.
    const confirm = page.getByRole('alertdialog');
    await key(1).getByRole('button', { name: 'Delete' }).click();
    await confirm.getByText(`Delete key #1 (sk-n...${KEYS[1]!.slice(-4)}) of pool? It cannot be brought back.`).waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await keyStatus()).total, 3);
    await key(1).getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('status').getByText('Key #1 deleted; the keys after it moved up one index.').waitFor();
    const left = await keyStatus();
    assert.equal(left.total, 2);
    assert.deepEqual(left.keys.map((k: any) => [k.index, k.status]), [[0, 1], [1, 2]]);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // The editor of a multi-key channel: the hint names the stored keys; a new key is appended.
    await row.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('dialog');
    await editor.locator('button[type="submit"]:enabled').waitFor();
    assert.match(await editor.locator('#ch-key-hint').innerText(), /^Leave empty to keep the 2 stored keys\./);
    assert.equal(await editor.getByLabel('Key update').inputValue(), 'append');
    assert.equal(await editor.getByLabel('Key selection').inputValue(), 'polling');
    await editor.getByLabel('Key', { exact: true }).fill(ADDED);
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved pool.').waitFor();
    const after = (await root.get(`/api/channel/${id}`)).json.data;
    assert.equal(after.channel_info.multi_key_size, 3);
    assert.equal((await keyStatus()).keys[2].key_preview, `sk-m...${ADDED.slice(-4)}`);

    // Reveal (root, TOTP) and copy the keys.
    await row.getByRole('button', { name: 'Reveal key' }).click();
    const reveal = page.getByRole('dialog');
    await reveal.getByLabel('Authenticator code').fill(new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate());
    await reveal.getByRole('button', { name: 'Verify and reveal' }).click();
    const revealed = (await page.getByTestId('revealed-key').innerText()).trim();
    assert.equal(revealed, [KEYS[0], KEYS[2], ADDED].join('\n'));
    await reveal.getByRole('button', { name: 'Copy the key' }).click();
    await reveal.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), revealed);
    await screenshot(page, 'gateway-channel-key-copied');
  } finally {
    await browser.close();
  }
});
