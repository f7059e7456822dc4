import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The operations page against a real gateway and a fake OpenAI-style upstream: each job or read-out is run
// from its panel and what the page shows is checked against the gateway's own state.
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
const skip = browserSkip;

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'POST /v1/chat/completions': (_r, res) => sendJson(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
    'GET /v1/models': (_r, res) => sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-4o' }, { id: 'gpt-new' }] }),
    'GET /v1/dashboard/billing/subscription': (_r, res) => sendJson(res, 200, { hard_limit_usd: 100 }),
    'GET /v1/dashboard/billing/usage': (_r, res) => sendJson(res, 200, { total_usage: 2500 }),
  });
  gw = await startGateway({ name: 'sqlite' }, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1' } });
  root = await gw.staff('ops', 'root');
  const settings = JSON.stringify({ upstream_model_update_check_enabled: true });
  const good = await root.post('/api/channel/', { mode: 'single', channel: { name: 'good', type: 1, key: 'sk-good', models: 'gpt-4o', base_url: up.url, group: 'default', settings } });
  assert.equal(good.status, 200, good.text);
  await root.post('/api/channel/', { mode: 'single', channel: { name: 'broken', type: 1, key: 'sk-bad', models: 'gpt-4o', base_url: up.url + '/down', group: 'default' } });
});

after(async () => {
  if (!skip) {
    await gw.close();
    await up.close();
  }
});

test('gateway console operations: jobs with progress and results, maintenance, plugins, tasks', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/operations', root.token!);
    const panel = (name: string) => page.getByRole('region', { name });
    const figure = (region: ReturnType<typeof panel>, key: string) => region.locator(`.figures [data-key="${key}"] dd`).innerText();

    // Test all: the job runs to its end; one channel answers, the other fails and is listed.
    // Fleet-wide actions ask first, in the console's own dialog.
    page.on('dialog', (d) => assert.fail(`a browser dialog opened: ${d.message()}`));
    const confirm = page.getByRole('alertdialog');
    const tests = panel('Test all channels');
    await tests.getByRole('button', { name: 'Run' }).click();
    await confirm.getByText('Channels that fail may be disabled automatically').waitFor();
    await confirm.getByRole('button', { name: 'Test every channel' }).click();
    await tests.getByRole('status').getByText('Succeeded').waitFor({ timeout: 30_000 });
    assert.equal(await figure(tests, 'succeeded'), '1');
    assert.equal(await figure(tests, 'failed'), '1');
    // The failure names its channel; a new try shows what the upstream says.
    const failure = tests.locator('tbody tr');
    assert.equal(await failure.getAttribute('data-id'), '2');
    await failure.getByRole('rowheader').getByText('broken').waitFor();
    await failure.getByRole('button', { name: 'Test again' }).click();
    await failure.locator('.upstream-message').getByText('no route POST /down/v1/chat/completions').waitFor();
    assert.ok(Number((await root.get('/api/channel/1')).json.data.test_time) > 0, 'the good channel was tested');
    assert.equal(await tests.locator('progress').getAttribute('value'), '2');

    // Balances: the upstream's figures are stored on the channel.
    const balances = panel('Update all balances');
    await balances.getByRole('button', { name: 'Run' }).click();
    await balances.getByRole('status').getByText('Succeeded').waitFor({ timeout: 30_000 });
    assert.equal(await figure(balances, 'updated'), '1');
    assert.equal((await root.get('/api/channel/1')).json.data.balance, 75);

    // Detect, then apply: the new upstream model lands in the channel's models.
    const detect = panel('Detect upstream model updates');
    await detect.getByRole('button', { name: 'Run' }).click();
    await detect.getByRole('status').getByText('Succeeded').waitFor({ timeout: 30_000 });
    await detect.locator('tr[data-id="1"]').getByText('gpt-new').waitFor();
    const apply = panel('Apply upstream model updates');
    await apply.getByRole('button', { name: 'Run' }).click();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.deepEqual((await root.get('/api/channel/1')).json.data.models.split(','), ['gpt-4o'], 'Cancel applies nothing');
    await apply.getByRole('button', { name: 'Run' }).click();
    await confirm.getByRole('button', { name: 'Apply to every channel' }).click();
    await apply.locator('tr[data-id="1"]').getByText('gpt-new').waitFor();
    assert.equal(await figure(apply, 'added_models'), '1');
    assert.deepEqual((await root.get('/api/channel/1')).json.data.models.split(','), ['gpt-4o', 'gpt-new']);

    // Index rebuild and the enabled models read-out.
    const fix = panel('Rebuild the abilities index');
    await fix.getByRole('button', { name: 'Run' }).click();
    await fix.locator('.figures').waitFor();
    assert.equal(await figure(fix, 'success'), '2');
    const models = panel('Enabled models');
    await models.getByRole('button', { name: 'Load' }).click();
    await models.getByRole('listitem').filter({ hasText: 'gpt-new' }).waitFor();
    assert.deepEqual(await models.getByRole('listitem').allInnerTexts(), (await root.get('/api/channel/models_enabled')).json.data);

    // Plugins: enabling one from its row is what G77 then reports.
    const plugins = panel('Task plugins');
    await plugins.getByRole('button', { name: 'Load' }).click();
    const row = plugins.locator('tr[data-id="example-echo-video"]');
    await row.getByRole('button', { name: 'Enable' }).click();
    await plugins.getByText('Plugin example-echo-video enabled.').waitFor();
    await row.getByRole('button', { name: 'Disable' }).waitFor();
    const status = (await root.get('/api/plugin/task/runtime/status')).json.data;
    assert.equal(status.plugins.find((p: any) => p.key === 'example-echo-video').enabled, true);

    // Plugin tasks: a stored task is listed with its status; the status filter narrows the list.
    const now = Math.floor(Date.now() / 1000);
    await gw.ctx.db.insertInto('task_plugin_tasks').values({ task_id: 'task_console_1', plugin_key: 'example-echo-video', plugin_version: '1.0.0', owner_id: 7, owner_name: 'alice', status: 'failed', input: '{}', result: null, error: 'upstream said no', created_at: now, updated_at: now } as any).execute();
    const tasks = panel('Plugin tasks');
    await tasks.getByRole('button', { name: 'Load' }).click();
    const task = tasks.locator('tr[data-id="task_console_1"]');
    await task.getByText('upstream said no').waitFor();
    assert.equal(await task.locator('.badge').innerText(), 'Failed');
    await tasks.getByLabel('Status').selectOption('succeeded');
    await tasks.getByText('Nothing yet.').waitFor();
    await tasks.getByLabel('Status').selectOption('');
    await task.waitFor();

    // Affinity cache statistics (root).
    const affinity = panel('Channel-affinity cache');
    await affinity.getByRole('button', { name: 'Load' }).click();
    assert.equal(await figure(affinity, 'cache_capacity'), String((await root.get('/api/option/channel_affinity_cache')).json.data.cache_capacity));
    await screenshot(page, 'gateway-operations');

    // The same page in Chinese.
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('region', { name: '测试所有渠道' }).getByText('成功', { exact: true }).first().waitFor();
    await page.getByRole('region', { name: '插件任务' }).locator('tr[data-id="task_console_1"] .badge').getByText('失败', { exact: true }).waitFor();
    await screenshot(page, 'gateway-operations-zh');
  } finally {
    await browser.close();
  }
});
