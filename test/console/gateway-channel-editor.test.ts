import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startConnectProxy, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';
import { NOT_RELAYED } from '../../web/src/gateway/channels/not-relayed.js';
import { CHANNEL_TYPES } from '../../src/gateway/channels/types.js';
import { testable } from '../../src/gateway/providers/index.js';

// The full channel editor against a real gateway and a fake upstream: types by name (no internal or dummy
// types, unservable ones marked), the key hint of each mode, models fetched from the upstream and picked
// (G16 with the typed key, G17 with the stored one), every field the API accepts written and read back,
// the API's validation message at its field, the editor's own checks of the relay settings, an edit that
// sends only what changed (so an admin without the sensitive-write permission can edit plain fields);
// desktop and a 390 px phone, English and Chinese.
let gw: GatewayServer;
let up: FakeUpstream;
let proxy: Awaited<ReturnType<typeof startConnectProxy>>;
let root: StaffClient;
let editor: StaffClient;
const skip = browserSkip;
const KEY = 'sk-editor-good-0123456789';

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'GET /up/v1/models': (r, res) => {
      if (r.headers.authorization !== `Bearer ${KEY}`) return sendJson(res, 401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } });
      sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }] });
    },
  });
  proxy = await startConnectProxy();
  gw = await startGateway({ name: 'sqlite' }, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1' } });
  root = await gw.staff('ops', 'root');
  editor = await gw.staff('editor', 'admin', { deny: ['authz.ChannelSensitiveWrite'] });
});

after(async () => {
  if (!skip) {
    assert.ok(!gw.everything().includes(KEY), 'the key leaked');
    await gw.close();
    await up.close();
    await proxy.close();
  }
});

test('the console marks the same types as not relayed as the channel tests refuse', () => {
  const refused = Object.keys(CHANNEL_TYPES).map(Number).filter((type) => !testable(type));
  assert.ok(refused.length > 0, 'some channel types have no test');
  assert.deepEqual([...NOT_RELAYED].sort((a, b) => a - b), refused.sort((a, b) => a - b));
});

test('gateway console channel editor: every field, fetch models, key hints, validation, partial edits', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    page.on('dialog', (d) => assert.fail(`a browser dialog opened: ${d.message()}`));
    const dialog = page.getByRole('dialog');
    const field = (label: string) => dialog.getByLabel(label, { exact: true });
    await page.getByText('Page 1 · 0 in all').waitFor();
    await page.getByRole('button', { name: 'New channel' }).click();

    // Types by name: no Unknown or Dummy placeholders; types the relay cannot serve are marked.
    const types = await field('Type').locator('option').allInnerTexts();
    assert.ok(!types.some((x) => /^(Unknown|Dummy)/.test(x)), types.join('|'));
    assert.ok(types.includes('OpenAI') && types.includes('Anthropic') && types.includes('Midjourney (not relayed)'));
    assert.deepEqual(types, [...types].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
    assert.equal(await field('Type').inputValue(), '1');
    await field('Type').selectOption({ label: 'Midjourney (not relayed)' });
    await dialog.getByText('The relay has no adapter for this type').waitFor();

    // The key hint follows the mode and the type.
    const hint = dialog.locator('#ch-key-hint');
    await field('Type').selectOption({ label: 'OpenAI' });
    assert.equal(await hint.innerText(), 'The upstream’s API key.');
    await field('Create mode').selectOption('batch');
    assert.match(await hint.innerText(), /^One key per line: each line becomes a channel of its own/);
    await field('Add each key’s first 8 characters to the channel’s title').waitFor();
    await field('Create mode').selectOption('multi_to_single');
    assert.match(await hint.innerText(), /^One key per line: one channel that uses all of them/);
    await field('Key selection').waitFor();
    await field('Create mode').selectOption('single');
    await field('Type').selectOption({ label: 'Codex' });
    assert.match(await hint.innerText(), /^A JSON object with access_token and account_id/);
    await field('Type').selectOption({ label: 'OpenAI' });

    // Fetching models needs a key (here: the one typed, G16); the operator picks from the upstream's list.
    await dialog.getByRole('button', { name: 'Fetch models from the upstream' }).click();
    await dialog.locator('#ch-key-error').getByText('Enter a key first').waitFor();
    await field('Name').fill('editor-new');
    await field('Key').fill(KEY);
    await field('Base URL').fill(`${up.url}/up`);
    await dialog.getByRole('button', { name: 'Fetch models from the upstream' }).click();
    const picker = dialog.locator('fieldset.picker');
    await picker.getByText('The upstream offers 3 model(s).').waitFor();
    await picker.getByLabel('o3-mini').uncheck();
    await picker.getByLabel('Filter models').fill('mini');
    assert.deepEqual((await picker.locator('li').allInnerTexts()).map((x) => x.trim()), ['gpt-4o-mini', 'o3-mini']);
    await picker.getByLabel('Filter models').fill('');
    await picker.getByRole('button', { name: 'Use the 2 checked model(s)' }).click();
    assert.equal(await field('Models (comma-separated)').inputValue(), 'gpt-4o,gpt-4o-mini');

    // Every other field.
    await field('Remark').fill('made in the editor');
    await field('Other (API version or extra value)').fill('v-extra');
    await field('Organization').fill('org-123');
    await field('Proxy').fill('ftp://proxy.example');
    await field('Test model').fill('gpt-4o-mini');
    await field('Model mapping (JSON)').fill('[1]');
    await field('Check the upstream for model changes').check();
    await field('Apply detected changes automatically').check();
    await field('Groups (comma-separated)').fill('default, vip');
    await field('Tag').fill('team-a');
    await field('Priority').fill('5');
    await field('Weight').fill('2');
    await field('Disable automatically when it fails').uncheck();
    await field('Budget (quota units)').fill('1000000');
    await dialog.getByText('= $2.00; the channel is disabled when its use reaches it.').waitFor();
    await field('Breaker: failures').fill('0');
    await field('Breaker: window (seconds)').fill('30');
    await field('Breaker: first cooldown (seconds)').fill('15');
    await field('Status code mapping (JSON)').fill('{"400": "500"}');
    await field('Parameter override (JSON)').fill('{"temperature": 0.2}');
    await field('Header override (JSON)').fill('{"X-Team": "research"}');
    await field('Extra settings (JSON)').fill('{"force_format": true}');

    // The editor's own checks (the API stores these settings as any JSON): the first bad field gets the focus.
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.locator('#ch-proxy-error').getByText('The proxy must be an http://, https:// or socks5:// address.').waitFor();
    await dialog.locator('#ch-breaker_failures-error').getByText('Breaker: failures must be a whole number above 0.').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'ch-proxy');
    await field('Proxy').fill(proxy.url);
    await field('Breaker: failures').fill('3');

    // The API's validation message lands at its field; nothing is created.
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.locator('#ch-model_mapping-error').getByText('Please check: Model mapping (JSON) must be a JSON object, like {"a": "b"}.').waitFor();
    assert.equal(await dialog.getByRole('alert').locator('code').innerText(), 'CHANNEL_INVALID');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'ch-model_mapping');
    assert.equal(await field('Model mapping (JSON)').getAttribute('aria-invalid'), 'true');
    assert.equal((await root.get('/api/channel/?p=1&page_size=10')).json.data.total, 0);
    await screenshot(page, 'gateway-channel-editor-error');
    await field('Model mapping (JSON)').fill('{"gpt-4o": "gpt-4o-2024-08-06"}');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Created 1 channel(s).').waitFor();

    // Read back: every field as typed.
    const id = (await root.get('/api/channel/?p=1&page_size=10')).json.data.items[0].id;
    const c = (await root.get(`/api/channel/${id}`)).json.data;
    assert.deepEqual(
      { name: c.name, type: c.type, status: c.status, base_url: c.base_url, models: c.models, test_model: c.test_model, group: c.group, tag: c.tag, priority: c.priority, weight: c.weight, auto_ban: c.auto_ban, remark: c.remark, other: c.other, openai_organization: c.openai_organization },
      { name: 'editor-new', type: 1, status: 1, base_url: `${up.url}/up`, models: 'gpt-4o,gpt-4o-mini', test_model: 'gpt-4o-mini', group: 'default,vip', tag: 'team-a', priority: 5, weight: 2, auto_ban: 0, remark: 'made in the editor', other: 'v-extra', openai_organization: 'org-123' },
    );
    assert.deepEqual(JSON.parse(c.model_mapping), { 'gpt-4o': 'gpt-4o-2024-08-06' });
    assert.deepEqual(JSON.parse(c.status_code_mapping), { '400': '500' });
    assert.deepEqual(JSON.parse(c.param_override), { temperature: 0.2 });
    assert.deepEqual(JSON.parse(c.header_override), { 'X-Team': 'research' });
    assert.deepEqual(JSON.parse(c.setting), { force_format: true, proxy: proxy.url });
    assert.deepEqual(JSON.parse(c.settings), {
      quota_limit: 1000000,
      breaker_failures: 3,
      breaker_window_seconds: 30,
      breaker_cooldown_seconds: 15,
      upstream_model_update_check_enabled: true,
      upstream_model_update_auto_sync_enabled: true,
    });
    assert.equal(c.key, '');

    // State the model-update jobs keep in settings stays as it is through the editor.
    const managed = { ...JSON.parse(c.settings), upstream_model_update_last_detected_models: ['o3-mini'], upstream_model_update_last_check_time: 1700000000 };
    assert.equal((await root.put('/api/channel/', { id, settings: JSON.stringify(managed) })).status, 200);

    // Edit: the stored values are loaded; fetching models uses the stored key (G17); the budget is cleared.
    await page.locator(`tr[data-id="${id}"]`).getByRole('button', { name: 'Edit' }).click();
    await dialog.getByRole('heading', { name: 'Edit channel editor-new' }).waitFor();
    await dialog.locator('button[type="submit"]:enabled').waitFor();
    assert.equal(await field('Proxy').inputValue(), proxy.url);
    assert.equal(await field('Budget (quota units)').inputValue(), '1000000');
    assert.equal(await field('Key').inputValue(), '');
    assert.equal(await dialog.locator('#ch-key-hint').innerText(), 'Leave empty to keep the stored key; a new value replaces it.');
    assert.ok(!(await field('Extra options (JSON)').inputValue()).includes('upstream_model_update'), 'the jobs’ own state is not shown');
    await dialog.getByText('Uses the stored key.').waitFor();
    await dialog.getByRole('button', { name: 'Fetch models from the upstream' }).click();
    await picker.getByText('The upstream offers 3 model(s).').waitFor();
    assert.equal(proxy.tunnels.length, 1, 'the stored channel is asked through its proxy');
    assert.equal(await picker.getByLabel('gpt-4o', { exact: true }).isChecked(), true);
    assert.equal(await picker.getByLabel('o3-mini').isChecked(), false);
    await picker.getByLabel('o3-mini').check();
    await picker.getByRole('button', { name: 'Use the 3 checked model(s)' }).click();
    await field('Budget (quota units)').fill('');
    await screenshot(page, 'gateway-channel-editor');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved editor-new.').waitFor();
    const edited = (await root.get(`/api/channel/${id}`)).json.data;
    assert.equal(edited.models, 'gpt-4o,gpt-4o-mini,o3-mini');
    const settings = JSON.parse(edited.settings);
    assert.equal(settings.quota_limit, undefined);
    assert.deepEqual(settings.upstream_model_update_last_detected_models, ['o3-mini']);
    assert.equal(settings.upstream_model_update_last_check_time, 1700000000);
    assert.equal(settings.breaker_failures, 3);

    // An admin without the sensitive-write permission edits the plain fields: only the changed ones are sent.
    const limited = await signedInGatewayPage(browser, gw.url + '/', editor.token!);
    const limitedDialog = limited.getByRole('dialog');
    await limited.locator(`tr[data-id="${id}"]`).getByRole('button', { name: 'Edit' }).click();
    await limitedDialog.locator('button[type="submit"]:enabled').waitFor();
    await limitedDialog.getByLabel('Remark', { exact: true }).fill('edited by a plain admin');
    await limitedDialog.getByRole('button', { name: 'Save' }).click();
    await limited.getByText('Saved editor-new.').waitFor();
    assert.equal((await root.get(`/api/channel/${id}`)).json.data.remark, 'edited by a plain admin');
    // A sensitive field is refused with the API's message; nothing changes.
    await limited.locator(`tr[data-id="${id}"]`).getByRole('button', { name: 'Edit' }).click();
    await limitedDialog.locator('button[type="submit"]:enabled').waitFor();
    await limitedDialog.getByLabel('Proxy', { exact: true }).fill('http://127.0.0.1:3128');
    await limitedDialog.getByRole('button', { name: 'Save' }).click();
    await limitedDialog.getByRole('alert').getByText('Permission authz.ChannelSensitiveWrite is required').waitFor();
    assert.equal(JSON.parse((await root.get(`/api/channel/${id}`)).json.data.setting).proxy, proxy.url);
    await limited.close();

    // Chinese on a 390 px phone: the editor fits the screen; the API's message is shown in Chinese.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.locator(`tr[data-id="${id}"]`).getByRole('button', { name: '编辑' }).click();
    await dialog.locator('button[type="submit"]:enabled').waitFor();
    await field('模型映射（JSON）').fill('x');
    await dialog.getByRole('button', { name: '保存' }).click();
    await dialog.locator('#ch-model_mapping-error').getByText('请检查：模型映射（JSON）必须是 JSON 对象，例如 {"a": "b"}。').waitFor();
    await dialog.getByRole('alert').getByText('请检查：模型映射（JSON）必须是 JSON 对象').waitFor();
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, dialog: document.querySelector('dialog')!.getBoundingClientRect().right, form: document.querySelector('dialog')!.scrollWidth - document.querySelector('dialog')!.clientWidth }));
    assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
    assert.ok(widths.dialog <= 390, `the editor ends at ${widths.dialog} px`);
    assert.ok(widths.form <= 0, 'nothing in the editor scrolls sideways');
    await screenshot(page, 'gateway-channel-editor-phone-zh');
    await dialog.getByRole('button', { name: '取消' }).click();
    assert.deepEqual(JSON.parse((await root.get(`/api/channel/${id}`)).json.data.model_mapping), { 'gpt-4o': 'gpt-4o-2024-08-06' });
  } finally {
    await browser.close();
  }
});
