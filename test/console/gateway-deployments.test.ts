import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { gatewayCli } from '../helpers/gateway-cli.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The deployments page against a real gateway and a fake io.net that keeps its deployments, so every form's
// effect is read back through the gateway's API (G41/G44) after the page acted.
const KEY = 'ionet-console-key-0123456789';
let gw: GatewayServer;
let up: FakeUpstream;
let ops: StaffClient;
const skip = browserSkip;

type Deployment = { id: string; name: string; status: string; minutes: number; image?: string; env?: Record<string, string> };
const store = new Map<string, Deployment>();

function fakeIoNet() {
  const json = (h: (r: Seen) => unknown, status = 200) => (r: Seen, res: http.ServerResponse) => (r.headers['x-api-key'] === KEY ? sendJson(res, status, h(r)) : sendJson(res, 401, { detail: 'bad key' }));
  const row = (d: Deployment) => ({ id: d.id, name: d.name, status: d.status, hardware_quantity: 1, brand_name: 'NVIDIA', hardware_name: 'H100', compute_minutes_remaining: d.minutes, created_at: '2026-01-01T00:00:00Z' });
  const routes: Record<string, (r: Seen, res: http.ServerResponse) => void> = {
    'GET /caas/hardware/max-gpus-per-container': json(() => ({ data: { hardware: [{ hardware_id: 7, hardware_name: 'H100', brand_name: 'NVIDIA', max_gpus_per_container: 8, available: 5 }], total: 5 } })),
    'GET /caas/locations': json(() => ({ data: { locations: [{ id: 3, name: 'Germany', iso2: 'de', available: 4 }], total: 4 } })),
    'GET /caas/clusters/check_cluster_name_availability': json((r) => ![...store.values()].some((d) => d.name === r.url.searchParams.get('cluster_name'))),
    'GET /caas/price': json(() => ({ data: { total_cost_usdc: 12.5, ionet_fee: 0, currency_conversion_fee: 0 } })),
    'GET /caas/deployments': json(() => ({ data: { deployments: [...store.values()].map(row), total: store.size } })),
    'POST /caas/deploy': json((r) => {
      const id = `d${store.size + 10}`;
      store.set(id, { id, name: r.json.resource_private_name, status: 'deployment requested', minutes: 60 * r.json.duration_hours });
      return { deployment_id: id, status: 'deployment requested' };
    }),
  };
  for (const id of ['d1', 'd2', 'd12']) {
    routes[`GET /caas/deployment/${id}`] = json(() => ({ data: { ...row(store.get(id)!), total_containers: 1, container_config: { image_url: store.get(id)!.image ?? 'vllm/vllm-openai', env_variables: store.get(id)!.env ?? {} } } }));
    routes[`DELETE /caas/deployment/${id}`] = json(() => (store.delete(id), { status: 'termination requested', deployment_id: id }));
    routes[`POST /caas/deployment/${id}/extend`] = json((r) => {
      const d = store.get(id)!;
      d.minutes += 60 * r.json.duration_hours;
      return { data: { ...row(d), compute_minutes_remaining: d.minutes } };
    });
    routes[`PATCH /caas/deployment/${id}`] = json((r) => {
      const d = store.get(id)!;
      if (r.json.image_url) d.image = r.json.image_url;
      if (r.json.env_variables) d.env = r.json.env_variables;
      return { deployment_id: id, status: 'updating' };
    });
    routes[`GET /caas/deployment/${id}/containers`] = json(() => ({ data: { total: 1, workers: [worker(id)] } }));
    routes[`GET /caas/deployment/${id}/container/c-${id}`] = json(() => ({ data: worker(id) }));
    // The log holds the API key once: the gateway scrubs it before the page sees it.
    routes[`GET /caas/deployment/${id}/log/c-${id}`] = (r, res) => {
      if (r.headers['x-api-key'] !== KEY) return sendJson(res, 401, { detail: 'bad key' });
      res.writeHead(200, { 'content-type': 'text/plain' });
      const stream = r.url.searchParams.get('stream');
      res.end(stream === 'stderr' ? `warning: slow disk on ${id}\n` : `server started on ${id}\nkey ${KEY}\nready\n`);
    };
    routes[`PUT /caas/clusters/${id}/update-name`] = json((r) => ((store.get(id)!.name = r.json.cluster_name), { status: 'success', message: 'name updated' }));
  }
  return startFakeUpstream(routes);
}

function worker(id: string) {
  return { container_id: `c-${id}`, device_id: `dev-${id}`, status: 'Running', uptime_percent: 97, public_url: `https://${id}.example`, container_events: [{ time: '2026-01-02T03:04:05Z', message: `pulled image for ${id}` }] };
}

before(async () => {
  if (skip) return;
  store.set('d1', { id: 'd1', name: 'alpha', status: 'Running', minutes: 90 });
  store.set('d2', { id: 'd2', name: 'beta', status: 'Completed', minutes: 0 });
  up = await fakeIoNet();
  gw = await startGateway({ name: 'sqlite' }, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_IONET_BASE_URL: up.url + '/caas' } });
  ops = await gw.staff('ops', 'admin');
});

after(async () => {
  if (skip) return;
  assert.ok(!gw.everything().includes(KEY), 'the io.net key leaked');
  await gw.close();
  await up.close();
});

test('gateway console deployments: off notice, list, create, rename, extend, delete', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/deployments', ops.token!);
    await page.getByText('io.net deployments are off').waitFor();
    // A neutral notice: neither the error style nor the success style.
    const off = await page.getByTestId('deployments-off').evaluate((el) => {
      // The colours of the error and success boxes, from probes of those classes.
      const [alert, success] = ['alert', 'notice'].map((cls) => {
        const p = document.createElement('div');
        p.className = cls;
        document.body.append(p);
        const c = getComputedStyle(p).color;
        p.remove();
        return c;
      });
      return { color: getComputedStyle(el).color, alert, success };
    });
    assert.notEqual(off.color, off.alert, 'the off notice is not in the error style');
    assert.notEqual(off.color, off.success, 'the off notice is not in the success style');

    // The key is stored (the CLI reads it from standard input), then the CLI switches deployments on.
    await gw.services.deployments.setSettings({ apiKey: KEY });
    assert.equal((await gatewayCli(gw, {}, 'deployment-settings', '--enabled', 'true')).error, null);
    await page.reload();
    const rows = page.locator('tbody tr');
    await page.locator('tr[data-id="d1"]').getByText('Running').waitFor();
    assert.equal(await rows.count(), 2);
    assert.equal(await page.locator('.figures [data-key="total_available"] dd').innerText(), '5');

    // Create: hardware and location come from the provider; the price is estimated first.
    const dialog = page.getByRole('dialog');
    await page.getByRole('button', { name: 'New deployment' }).click();
    await dialog.getByLabel('Deployment name').fill('alpha');
    await dialog.getByLabel('Container image').fill('vllm/vllm-openai:v1');
    await dialog.getByLabel('Hardware').selectOption('7');
    await dialog.getByLabel('Hours').fill('3');
    await dialog.getByRole('button', { name: 'Estimate price' }).click();
    await dialog.getByText('Estimated cost: 12.5 USDC').waitFor();
    await dialog.getByRole('button', { name: 'Create deployment' }).click();
    await dialog.getByRole('alert').getByText('The name alpha is already in use.').waitFor();
    await dialog.getByLabel('Deployment name').fill('gamma');
    await dialog.getByRole('button', { name: 'Create deployment' }).click();
    await page.getByText('Deployment gamma requested (d12).').waitFor();
    await page.locator('tr[data-id="d12"]').getByText('Requested').waitFor();
    const created = up.to('/caas/deploy').at(-1)!.json;
    assert.deepEqual([created.hardware_id, created.location_ids, created.duration_hours, created.registry_config.image_url], [7, [3], 3, 'vllm/vllm-openai:v1']);
    assert.ok((await ops.get('/api/deployments/?p=1&page_size=10')).json.data.items.some((d: any) => d.id === 'd12' && d.deployment_name === 'gamma'));
    await screenshot(page, 'gateway-deployments');

    // Rename alpha.
    await page.locator('tr[data-id="d1"]').getByRole('button', { name: 'Rename' }).click();
    await dialog.getByLabel('Deployment name').fill('alpha-2');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Renamed to alpha-2.').waitFor();
    await page.locator('tr[data-id="d1"]').getByText('alpha-2').waitFor();
    assert.equal((await ops.get('/api/deployments/d1')).json.data.deployment_name, 'alpha-2');

    // Extend it by two hours: 90 + 120 minutes.
    await page.locator('tr[data-id="d1"]').getByRole('button', { name: 'Extend' }).click();
    await dialog.getByLabel('Hours').fill('2');
    await dialog.getByRole('button', { name: 'Extend' }).click();
    await page.getByText('alpha-2 extended: 210 minutes remaining.').waitFor();
    assert.equal((await ops.get('/api/deployments/d1')).json.data.compute_minutes_remaining, 210);

    // Delete beta after confirming.
    page.once('dialog', (d) => void d.accept());
    await page.locator('tr[data-id="d2"]').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Termination of beta requested.').waitFor();
    await page.locator('tr[data-id="d2"]').waitFor({ state: 'detached' });
    assert.deepEqual((await ops.get('/api/deployments/?p=1&page_size=10')).json.data.items.map((d: any) => d.id).sort(), ['d1', 'd12']);

    // Search by name and the Chinese page.
    await page.getByLabel('Name contains').fill('GAM');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Page 1 · 1 in all').waitFor();
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('button', { name: '新建部署' }).waitFor();
    await page.locator('tr[data-id="d12"]').getByText('已提交').waitFor();
    await screenshot(page, 'gateway-deployments-zh');
  } finally {
    await browser.close();
  }
});

test('gateway console deployment details: containers, events, logs by stream, update', { skip }, async () => {
  await gw.services.deployments.setSettings({ apiKey: KEY });
  assert.equal((await gatewayCli(gw, {}, 'deployment-settings', '--enabled', 'true')).error, null);
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/deployments', ops.token!);
    await page.locator('tr[data-id="d1"]').getByRole('button', { name: 'Details' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.locator('.figures [data-key="total_containers"] dd').getByText('1').waitFor();
    const container = dialog.locator('tr[data-id="c-d1"]');
    await container.getByText('dev-d1').waitFor();
    await container.getByRole('button', { name: 'Events' }).click();
    await dialog.getByText('pulled image for d1').waitFor();

    // Logs: the stdout lines first (the key scrubbed by the gateway), then stderr only.
    await container.getByRole('button', { name: 'Logs' }).click();
    const logs = dialog.locator('pre.logs');
    await logs.getByText('server started on d1').waitFor();
    const shown = await logs.innerText();
    assert.ok(shown.includes('ready') && !shown.includes(KEY), shown);
    assert.equal(up.to('/caas/deployment/d1/log/c-d1').at(-1)!.url.searchParams.get('limit'), '100');
    await dialog.getByLabel('Stream').selectOption('stderr');
    await logs.getByText('warning: slow disk on d1').waitFor();
    assert.equal(up.to('/caas/deployment/d1/log/c-d1').at(-1)!.url.searchParams.get('stream'), 'stderr');

    // Update: an empty form is refused in the page; a bad env line too; then image and env are sent.
    const update = dialog.getByRole('form', { name: 'Update deployment' });
    await update.getByRole('button', { name: 'Update deployment' }).click();
    await update.getByRole('alert').getByText('Fill in at least one field').waitFor();
    await update.getByLabel('Environment variables').fill('MODEL=qwen\nnot a pair');
    await update.getByRole('button', { name: 'Update deployment' }).click();
    await update.getByRole('alert').getByText('Not a KEY=value line: not a pair').waitFor();
    await update.getByLabel('Container image').fill('vllm/vllm-openai:v2');
    await update.getByLabel('Environment variables').fill('MODEL=qwen\nMAX_LEN=4096');
    await update.getByRole('button', { name: 'Update deployment' }).click();
    await dialog.getByText('Update sent (image_url, env_variables): updating.').waitFor();
    await dialog.locator('.figures [data-key="model_name"] dd').getByText('vllm/vllm-openai:v2').waitFor();
    const detail = (await ops.get('/api/deployments/d1')).json.data;
    assert.equal(detail.model_name, 'vllm/vllm-openai:v2');
    assert.deepEqual(detail.container_config.env_variables, { MODEL: 'qwen', MAX_LEN: '4096' });
    await screenshot(page, 'gateway-deployment-details');
  } finally {
    await browser.close();
  }
});
