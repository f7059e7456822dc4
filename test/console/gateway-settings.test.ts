import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The settings tab against a real gateway (and a fake io.net for the connection test): every change made
// on the page is read back through the API (GS16, G57, GS19, G62), on a desktop and a 390 px phone, in
// English and Chinese.
const IONET_KEY = 'ionet-console-settings-KEY-0123456789';
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
const skip = browserSkip;

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'GET /caas/hardware/max-gpus-per-container': (r, res) =>
      r.headers['x-api-key'] === IONET_KEY ? sendJson(res, 200, { data: { hardware: [{ hardware_id: 7, hardware_name: 'H100', brand_name: 'NVIDIA', max_gpus_per_container: 8, available: 5 }], total: 5 } }) : sendJson(res, 401, { detail: 'bad key' }),
  });
  gw = await startGateway({ name: 'sqlite' }, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_IONET_BASE_URL: up.url + '/caas' } });
  root = await gw.staff('chief', 'root');
  await gw.services.ratios.setCurrent({ model_ratio: { 'gpt-4o': 1.25 }, completion_ratio: { 'gpt-4o': 4 }, group_ratio: { vip: 0.5 } });
});

after(async () => {
  if (skip) return;
  assert.ok(!gw.everything().includes(IONET_KEY), 'the io.net key leaked');
  await gw.close();
  await up.close();
});

const ratios = async () => (await root.get('/api/ratio_config')).json.data;
const affinity = async () => (await root.get('/api/option/channel_affinity_setting')).json.data;
const noSideScroll = async (page: Page, what: string) => {
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `${what}: the page is ${width} px wide`);
};

test('gateway console settings: prices (table and JSON), io.net switch and key, channel affinity with its cache', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Model prices' }).first().waitFor();

    // Prices as a table: edit a ratio, add a model with a fixed price, keep the group multiplier.
    await page.getByLabel('Input ratio of gpt-4o').fill('2.5');
    await page.getByLabel('New model name').fill('claude-x');
    await page.getByRole('button', { name: 'Add model' }).click();
    await page.getByLabel('Fixed price (USD per call) of claude-x').fill('0.02');
    await page.getByLabel('Multiplier of vip').fill('0.8');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    let r = await ratios();
    assert.deepEqual([r.model_ratio, r.completion_ratio, r.model_price, r.group_ratio], [{ 'gpt-4o': 2.5 }, { 'gpt-4o': 4 }, { 'claude-x': 0.02 }, { vip: 0.8 }]);
    await screenshot(page, 'gateway-settings-ratios');

    // The API's message names the field; the cell is marked; nothing is stored.
    await page.getByLabel('Cache ratio of gpt-4o').fill('-1');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText('The value of gpt-4o in cache_ratio must be a number of 0 or more').waitFor();
    await page.getByRole('alert').getByText('RATIO_CONFIG_VALUE_INVALID').waitFor();
    assert.equal(await page.getByLabel('Cache ratio of gpt-4o').getAttribute('aria-invalid'), 'true');
    assert.deepEqual((await ratios()).cache_ratio, {});
    await page.getByLabel('Cache ratio of gpt-4o').fill('0.5');

    // Raw JSON: the table's configuration, a local JSON check, the API's named refusal, then a save.
    await page.getByRole('button', { name: 'Edit as JSON' }).click();
    const editor = page.getByLabel('Ratio configuration (JSON)');
    assert.deepEqual(JSON.parse(await editor.inputValue()).cache_ratio, { 'gpt-4o': 0.5 });
    await editor.fill('{"model_ratio": ');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText('The text is not valid JSON').waitFor();
    await editor.fill(JSON.stringify({ model_ratio: { 'gpt-4o': 3 }, model_ratoi: {} }));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText('Unknown ratio field model_ratoi').waitFor();
    await editor.fill(JSON.stringify({ model_ratio: { 'gpt-4o': 3, 'claude-x': 1 }, cache_ratio: { 'gpt-4o': 0.5 }, group_ratio: { vip: 0.8 } }));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    r = await ratios();
    assert.deepEqual([r.model_ratio, r.completion_ratio, r.cache_ratio, r.model_price], [{ 'gpt-4o': 3, 'claude-x': 1 }, {}, { 'gpt-4o': 0.5 }, {}]);
    await page.getByRole('button', { name: 'Edit as table' }).click();
    assert.equal(await page.getByLabel('Input ratio of gpt-4o').inputValue(), '3');

    // io.net: switch on with a key (write-only: never shown again), test it, then remove it after confirming.
    await page.getByRole('link', { name: 'io.net deployments' }).click();
    await page.locator('[data-key="configured"]').getByText('Not set').waitFor();
    await page.getByLabel('Enable io.net deployments').check();
    await page.getByLabel('API key').fill(IONET_KEY);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    await page.locator('[data-key="configured"]').getByText('Set', { exact: true }).waitFor();
    assert.equal(await page.getByLabel('API key').inputValue(), '');
    assert.ok(!(await page.content()).includes(IONET_KEY));
    let g57 = (await root.get('/api/deployments/settings')).json.data;
    assert.deepEqual([g57.enabled, g57.configured, g57.can_connect], [true, true, true]);
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText('Connected: 1 hardware types, 5 GPUs available.').waitFor();
    await screenshot(page, 'gateway-settings-deployments');
    await page.getByRole('button', { name: 'Remove key' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('Remove the stored io.net API key?').waitFor();
    await dialog.getByRole('button', { name: 'Remove key' }).click();
    await page.getByText('The API key was removed.').waitFor();
    g57 = (await root.get('/api/deployments/settings')).json.data;
    assert.deepEqual([g57.enabled, g57.configured], [true, false]);

    // Channel affinity: every field, a rule with a body-path source; a bad pattern is refused by name.
    await page.getByRole('link', { name: 'Channel affinity' }).click();
    await page.getByLabel('Enable channel affinity').check();
    await page.getByLabel('Keep when the channel is disabled').check();
    await page.getByLabel('Cache capacity').fill('500');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('Rule name', { exact: true }).fill('codex');
    await page.getByLabel('Model patterns').fill('(unclosed');
    await page.getByLabel('Source', { exact: true }).selectOption('gjson');
    await page.getByLabel('Name or path').fill('prompt_cache_key');
    await page.getByLabel('Time to live (seconds)', { exact: true }).fill('120');
    await page.getByLabel('Key includes the model').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText(/rules\[0\]\.model_regex/).waitFor();
    assert.equal((await affinity()).enabled, false, 'a refused save stores nothing');
    await page.getByLabel('Model patterns').fill('^gpt-\n^o\\d');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    const a = await affinity();
    assert.deepEqual([a.enabled, a.keep_on_channel_disabled, a.switch_on_success, a.max_entries, a.default_ttl_seconds], [true, true, true, 500, 3600]);
    assert.deepEqual(a.rules, [
      { name: 'codex', model_regex: ['^gpt-', '^o\\d'], path_regex: [], user_agent_include: [], key_sources: [{ type: 'gjson', path: 'prompt_cache_key' }], value_regex: '', ttl_seconds: 120, skip_retry_on_failure: false, include_using_group: true, include_model_name: false, include_rule_name: true },
    ]);

    // The cache: an entry the relay's write path records shows up; clearing the rule asks first.
    await gw.services.affinity.record({ model: 'gpt-4o', group: 'default', body: { prompt_cache_key: 'session-1' } }, 1);
    const cache = page.locator('section[aria-labelledby="af-cache"]');
    await cache.getByRole('button', { name: 'Load' }).click();
    await cache.locator('.figures [data-key="total"] dd', { hasText: '1' }).waitFor();
    await cache.locator('tr[data-id="codex"]').getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('alertdialog').getByText('Clear the entries of rule codex?').waitFor();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Clear' }).click();
    await cache.getByText('1 entries cleared.').waitFor();
    assert.equal((await root.get('/api/option/channel_affinity_cache')).json.data.total, 0);
    await cache.getByRole('button', { name: 'Clear all entries' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    await screenshot(page, 'gateway-settings-affinity');

    // Chinese: the texts, a save and the API's message in Chinese.
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '设置' }).waitFor();
    await page.getByRole('link', { name: '模型价格' }).click();
    await page.getByLabel('gpt-4o 的输入倍率').fill('4');
    await page.getByRole('button', { name: '保存' }).click();
    await page.getByText('已保存。').waitFor();
    assert.equal((await ratios()).model_ratio['gpt-4o'], 4);
    await page.getByLabel('gpt-4o 的补全倍率').fill('-2');
    await page.getByRole('button', { name: '保存' }).click();
    await page.getByRole('alert').getByText('completion_ratio 中 gpt-4o 的取值必须是不小于 0 的数字', { exact: false }).waitFor();
    await page.getByLabel('gpt-4o 的补全倍率').fill('');
    await screenshot(page, 'gateway-settings-zh');
    await page.getByRole('link', { name: '渠道亲和性' }).click();
    await page.getByLabel('启用渠道亲和性').waitFor();
    await page.getByRole('button', { name: 'English' }).click();
  } finally {
    await browser.close();
  }
});

test('gateway console settings at 390 px: every section fits, and changes are stored', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/settings', root.token!);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByLabel('Input ratio of gpt-4o').waitFor();
    await noSideScroll(page, 'prices');
    await page.getByLabel('Completion ratio of gpt-4o').fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    assert.equal((await ratios()).completion_ratio['gpt-4o'], 5);
    await screenshot(page, 'gateway-settings-ratios-phone');

    await page.getByRole('link', { name: 'io.net deployments' }).click();
    await page.getByLabel('Enable io.net deployments').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    await noSideScroll(page, 'io.net');
    assert.equal((await root.get('/api/deployments/settings')).json.data.enabled, false);
    await screenshot(page, 'gateway-settings-deployments-phone');

    await page.getByRole('link', { name: 'Channel affinity' }).click();
    await page.getByLabel('Rule name', { exact: true }).waitFor();
    await noSideScroll(page, 'affinity');
    await page.getByLabel('Enable channel affinity').uncheck();
    await page.getByLabel('User agent contains').fill('codex');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    const a = await affinity();
    assert.deepEqual([a.enabled, a.rules[0].user_agent_include], [false, ['codex']]);
    await noSideScroll(page, 'affinity after saving');
    await screenshot(page, 'gateway-settings-affinity-phone');

    // Chinese at 390 px.
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByLabel('启用渠道亲和性').waitFor();
    await noSideScroll(page, 'affinity in Chinese');
    await page.getByRole('button', { name: 'English' }).click();
  } finally {
    await browser.close();
  }
});
