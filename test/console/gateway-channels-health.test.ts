import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type http from 'node:http';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';

// The channel list's health columns against real relay traffic through a fake upstream: a budget that ran
// out and a circuit breaker that opened (their reasons in words), used quota, a balance read, tests that pass
// and fail (the failed row marked at once with the upstream's message), priority and weight edited in place
// with the API's validation message, column choices kept by the browser, deletions confirmed in the console's
// own dialog; desktop and a 390 px phone, English and Chinese. Every change is read back through the API.
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
const skip = browserSkip;
const ids = { alpha: 0, bravo: 0, charlie: 0, delta: 0 };

function answer(r: Seen, res: http.ServerResponse) {
  const name = r.path.split('/')[1]!;
  if (String(r.headers.authorization ?? '').endsWith('-bad')) return sendJson(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
  if (name === 'fail') return sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } });
  sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: r.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: name }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } });
}

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'POST /ok/v1/chat/completions': answer,
    'POST /fail/v1/chat/completions': answer,
    'POST /budget/v1/chat/completions': answer,
    'GET /ok/v1/dashboard/billing/subscription': (_r, res) => sendJson(res, 200, { hard_limit_usd: 100 }),
    'GET /ok/v1/dashboard/billing/usage': (_r, res) => sendJson(res, 200, { total_usage: 2500 }),
  });
  gw = await startGateway({ name: 'sqlite' }, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0', GATEWAY_RELAY_BACKOFF_MS: '0', GATEWAY_RETRY_TIMES: '5' } });
  root = await gw.staff('ops', 'root');
  await gw.services.ratios.setCurrent({ model_ratio: { 'gpt-4o': 1 } });
  const channel = async (name: keyof typeof ids, path: string, fields: Record<string, unknown>) => {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${path}`, group: 'default', models: 'gpt-4o', ...fields } });
    assert.equal(r.status, 200, r.text);
    ids[name] = r.json.data.ids[0];
  };
  await channel('alpha', 'ok', { key: 'sk-alpha-good', remark: 'primary' });
  await channel('bravo', 'ok', { key: 'sk-bravo-bad', models: 'not-routed' });
  await channel('charlie', 'fail', { key: 'sk-charlie-good', priority: 10, settings: JSON.stringify({ breaker_failures: 1 }) });
  await channel('delta', 'budget', { key: 'sk-delta-good', priority: 20, settings: JSON.stringify({ quota_limit: 30 }) });
  // Two calls spend delta's budget (20 each); the third disables it, fails on charlie (its breaker opens at
  // the first failure) and is served by alpha.
  const call = () => relay(gw.url, '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  for (const served of ['budget', 'budget', 'ok']) assert.equal((await call()).json.choices[0].message.content, served);
  const get = async (id: number) => (await root.get(`/api/channel/${id}`)).json.data;
  for (let i = 0; i < 100 && Number((await get(ids.alpha)).used_quota) === 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await get(ids.charlie)).status, 3);
  assert.equal((await get(ids.delta)).status, 2);
});

after(async () => {
  if (!skip) {
    await gw.close();
    await up.close();
  }
});

const get = async (id: number) => (await root.get(`/api/channel/${id}`)).json.data;
const headers = (page: Page) => page.locator('table.channels thead th').allInnerTexts();

test('gateway console channel health: columns, reasons, tests, balance, inline edits, column choice, confirmations', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    page.on('dialog', (d) => assert.fail(`a browser dialog opened: ${d.message()}`));
    const row = (name: keyof typeof ids) => page.locator(`tr[data-id="${ids[name]}"]`);
    const cell = (name: keyof typeof ids, col: string) => row(name).locator(`td.col-${col}`);
    await page.getByText('Page 1 · 4 in all').waitFor();
    assert.deepEqual((await headers(page)).slice(1), ['Name', 'ID', 'Type', 'Status', 'Groups', 'Models', 'Response time', 'Balance', 'Last test', 'Used', 'Priority', 'Weight', 'Tag', 'Why disabled', 'Actions']);

    // Why channels are disabled, in words, with the time; what they used (quota units as dollars).
    const delta = await get(ids.delta);
    const charlie = await get(ids.charlie);
    assert.match(JSON.parse(delta.other_info).status_reason, /^quota limit 30 reached \(used \d+\)$/);
    assert.match(JSON.parse(charlie.other_info).status_reason, /^breaker: 1 failures within 60 s, the last /);
    await cell('delta', 'reason').getByText(`Budget reached: $${(delta.used_quota / 500000).toPrecision(2)} used of $0.000060`).waitFor();
    await cell('charlie', 'reason').getByText(/^Circuit breaker: 1 failures within 60 s; the last: .*upstream exploded/).waitFor();
    await cell('charlie', 'reason').getByText('just now').waitFor();
    assert.equal(await cell('charlie', 'status').innerText(), 'Auto-disabled');
    assert.equal(await cell('delta', 'status').innerText(), 'Disabled');
    assert.equal(await cell('alpha', 'reason').innerText(), '—');
    const alpha = await get(ids.alpha);
    assert.ok(alpha.used_quota > 0);
    assert.equal(await cell('alpha', 'used_quota').innerText(), `$${(alpha.used_quota / 500000).toPrecision(2)}`);
    assert.equal(await cell('delta', 'used_quota').innerText(), `$${(delta.used_quota / 500000).toPrecision(2)} / $0.000060`);
    assert.equal(await cell('alpha', 'last_test').innerText(), 'Never');
    await row('alpha').getByRole('rowheader').getByText('primary').waitFor(); // the remark under the name

    // A passing test: the response time and test time are stored and shown.
    await row('alpha').getByRole('button', { name: 'Test' }).click();
    await page.getByRole('status').getByText(/^Test of alpha passed in \d+ ms \(gpt-4o\)\.$/).waitFor();
    const tested = await get(ids.alpha);
    assert.ok(tested.test_time > 0 && tested.response_time > 0);
    assert.equal(await cell('alpha', 'response_time').innerText(), `${tested.response_time} ms`);
    assert.match(await cell('alpha', 'last_test').innerText(), /^Passed\s+\d+ ms$/);

    // A failing test marks its row at once, with the upstream's own message; nothing is stored.
    await row('bravo').getByRole('button', { name: 'Test' }).click();
    await page.locator(`tr.test-failed[data-id="${ids.bravo}"]`).waitFor();
    await cell('bravo', 'last_test').getByText('Incorrect API key provided').waitFor();
    await cell('bravo', 'last_test').getByText('HTTP 401').waitFor();
    await page.getByRole('alert').getByText('Test of bravo failed: Incorrect API key provided').waitFor();
    assert.equal(await page.getByRole('alert').locator('code').innerText(), 'invalid_api_key');
    assert.equal((await get(ids.bravo)).test_time, 0);
    await page.getByText('1 channel(s) on this page failed their test: marked in red.').waitFor();

    // A balance read: the upstream's figure and its time.
    await row('alpha').getByRole('button', { name: 'Balance' }).click();
    await page.getByRole('status').getByText('Balance of alpha: 75 USD.').waitFor();
    assert.equal((await get(ids.alpha)).balance, 75);
    assert.ok((await get(ids.alpha)).balance_updated_time > 0);
    assert.equal(await cell('alpha', 'balance').innerText(), '75\njust now');
    await row('delta').getByRole('button', { name: 'Balance' }).click();
    await page.getByRole('alert').getByText(/^Balance of delta could not be read: /).waitFor();

    // Priority and weight in place: saved on Enter, the API's message on a bad value (nothing stored).
    await page.getByLabel('Priority of bravo').fill('7');
    await page.getByLabel('Priority of bravo').press('Enter');
    await cell('bravo', 'priority').getByText('Saved').waitFor();
    assert.equal((await get(ids.bravo)).priority, 7);
    await page.getByLabel('Weight of bravo').fill('-1');
    await page.getByLabel('Weight of bravo').press('Enter');
    await cell('bravo', 'weight').getByRole('alert').getByText('Please check: Weight must be at least 0.').waitFor();
    assert.equal(await page.getByLabel('Weight of bravo').getAttribute('aria-invalid'), 'true');
    assert.equal((await get(ids.bravo)).weight, 0);
    await page.getByLabel('Weight of bravo').fill('3');
    await page.getByLabel('Weight of bravo').press('Tab'); // leaving the field saves too
    await cell('bravo', 'weight').getByText('Saved').waitFor();
    assert.equal((await get(ids.bravo)).weight, 3);
    assert.equal(await cell('bravo', 'weight').getByRole('alert').count(), 0);
    await page.locator('.table-scroll').evaluate((box) => (box.scrollLeft = 0));
    await screenshot(page, 'gateway-channels-health');

    // Column choice, remembered by this browser across a reload.
    await page.locator('summary', { hasText: 'Columns' }).click();
    await page.getByLabel('Models', { exact: true }).uncheck();
    await page.getByLabel('Balance', { exact: true }).uncheck();
    assert.ok(!(await headers(page)).includes('Models'));
    await page.reload();
    await page.getByText('Page 1 · 4 in all').waitFor();
    const hidden = await headers(page);
    assert.ok(!hidden.includes('Models') && !hidden.includes('Balance') && hidden.includes('Why disabled'), hidden.join('|'));
    assert.deepEqual(JSON.parse((await page.evaluate(() => localStorage.getItem('console.gateway.channel_columns.hidden')))!).sort(), ['balance', 'models']);
    await page.locator('summary', { hasText: 'Columns' }).click();
    await page.getByRole('button', { name: 'Show all columns' }).click();
    assert.ok((await headers(page)).includes('Models'));
    await page.locator('summary', { hasText: 'Columns' }).click();

    // Chinese: the same table, reasons and results in Chinese, no raw field names or operation ids.
    await page.getByRole('button', { name: '中文' }).click();
    await page.locator('table.channels thead').getByText('响应时间').waitFor();
    await cell('charlie', 'reason').getByText(/^熔断：60 秒内失败 1 次；最后一次：/).waitFor();
    await cell('delta', 'reason').getByText(/^已达额度上限：已用 \$/).waitFor();
    assert.equal(await cell('charlie', 'status').innerText(), '自动禁用');
    await row('bravo').getByRole('button', { name: '测试' }).click();
    await page.getByRole('alert').getByText('bravo 测试失败：Incorrect API key provided').waitFor();
    const text = await page.locator('main').innerText();
    assert.doesNotMatch(text, /\b(G|GS)\d{2}\b|status_reason|response_time|used_quota|other_info|test_time|balance_updated_time/);
    await screenshot(page, 'gateway-channels-health-zh');

    // A 390 px phone: the page keeps its width, the table scrolls inside its box.
    await page.setViewportSize({ width: 390, height: 844 });
    const widths = await page.evaluate(() => {
      const box = document.querySelector('.table-scroll') as HTMLElement;
      return { page: document.documentElement.scrollWidth, box: box.clientWidth, table: box.scrollWidth };
    });
    assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
    assert.ok(widths.table > widths.box, 'the table scrolls sideways inside its box');
    await screenshot(page, 'gateway-channels-health-phone-zh');
    await page.getByRole('button', { name: 'English' }).click();

    // Deleting asks first, in the console's own dialog; Cancel keeps the channel.
    const confirm = page.getByRole('alertdialog');
    await row('bravo').getByRole('button', { name: 'Delete' }).click();
    await confirm.getByText(`Delete channel bravo (#${ids.bravo})?`).waitFor();
    await screenshot(page, 'gateway-channels-confirm-phone');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await root.get(`/api/channel/${ids.bravo}`)).status, 200);
    await row('bravo').getByRole('button', { name: 'Delete' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').getByText('Deleted bravo.').waitFor();
    assert.equal((await root.get(`/api/channel/${ids.bravo}`)).status, 404);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Copy and enable/disable report with the channel's name.
    await row('alpha').getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('status').getByText(/^Copied alpha as alpha \(copy\) \(#\d+\)\.$/).waitFor();
    const copies = (await root.get('/api/channel/search?keyword=alpha (copy)')).json.data.items;
    assert.equal(copies.length, 1);
    await row('delta').getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('status').getByText('Enabled delta.').waitFor();
    assert.equal((await get(ids.delta)).status, 1);
  } finally {
    await browser.close();
  }
});
