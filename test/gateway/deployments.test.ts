import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, hugeBody, sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { gatewayCli } from '../helpers/gateway-cli.js';

const KEY = 'ionet-SECRET-api-key-0123456789';

eachDatabase('gateway deployments on io.net (G41–G59)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let bad: GatewayServer;
  let ops: StaffClient;

  before(async () => {
    const authed = (h: (r: Seen, res: http.ServerResponse) => void) => (r: Seen, res: http.ServerResponse) => (r.headers['x-api-key'] === KEY ? h(r, res) : sendJson(res, 401, { detail: `Invalid API key ${r.headers['x-api-key']}` }));
    const d1 = { id: 'd1', status: 'Running', name: 'alpha', hardware_quantity: 2, brand_name: 'NVIDIA', hardware_name: 'H100', compute_minutes_remaining: 90, remaining: '1h 30m', created_at: '2026-01-01T00:00:00Z' };
    up = await startFakeUpstream({
      'GET /caas/hardware/max-gpus-per-container': authed((_r, res) => sendJson(res, 200, { data: { hardware: [{ hardware_id: 1, hardware_name: 'H100', brand_name: 'NVIDIA', max_gpus_per_container: 8, available: 5 }, { hardware_id: 2, hardware_name: 'A100', brand_name: 'NVIDIA', max_gpus_per_container: 4, available: 0 }], total: 5 } })),
      'GET /caas/locations': authed((_r, res) => sendJson(res, 200, { data: { locations: [{ id: 1, name: 'United States', iso2: 'us', available: 3 }], total: 3 } })),
      'GET /caas/available-replicas': authed((r, res) => sendJson(res, 200, { data: [{ id: 1, iso2: 'US', name: 'United States', available_replicas: Number(r.url.searchParams.get('hardware_qty')) * 2 }] })),
      'GET /caas/clusters/check_cluster_name_availability': authed((r, res) => sendJson(res, 200, r.url.searchParams.get('cluster_name') !== 'taken')),
      'GET /caas/price': authed((r, res) => {
        assert.equal(r.url.searchParams.get('duration_type'), 'daily');
        sendJson(res, 200, { data: { total_cost_usdc: 48, ionet_fee: 2, currency_conversion_fee: 1 } });
      }),
      'GET /caas/deployments': authed((_r, res) => sendJson(res, 200, { data: { deployments: [d1, { ...d1, id: 'd2', name: 'beta', status: 'Completed' }], total: 2 } })),
      'GET /caas/deployment/d1': authed((_r, res) => sendJson(res, 200, { data: { id: 'd1', status: 'Running', total_gpus: 2, gpus_per_container: 1, total_containers: 2, hardware_id: 1, hardware_name: 'H100', container_config: { image_url: 'vllm/vllm-openai' }, created_at: '2026-01-01T00:00:00Z' } })),
      'GET /caas/deployment/missing': authed((_r, res) => sendJson(res, 404, { detail: 'Deployment not found' })),
      'POST /caas/deploy': authed((r, res) => (r.json?.hardware_id === 999 ? sendJson(res, 422, { detail: [{ msg: 'hardware unavailable' }] }) : sendJson(res, 200, { deployment_id: 'd3', status: 'deployment requested' }))),
      'PATCH /caas/deployment/d1': authed((_r, res) => sendJson(res, 200, { status: 'updated', deployment_id: 'd1' })),
      'DELETE /caas/deployment/d1': authed((_r, res) => sendJson(res, 200, { status: 'termination requested', deployment_id: 'd1' })),
      'POST /caas/deployment/d1/extend': authed((r, res) => sendJson(res, 200, { data: { id: 'd1', status: 'running', compute_minutes_remaining: 60 * (r.json?.duration_hours ?? 0) } })),
      'PUT /caas/clusters/d1/update-name': authed((_r, res) => sendJson(res, 200, { status: 'success', message: 'name updated' })),
      'GET /caas/deployment/d1/containers': authed((_r, res) => sendJson(res, 200, { data: { total: 1, workers: [{ container_id: 'c1', device_id: 'dev1', status: 'Running', uptime_percent: 99, public_url: 'https://c1.example', container_events: [{ time: '2026-01-01T00:00:00Z', message: 'started' }] }] } })),
      'GET /caas/deployment/d1/container/c1': authed((_r, res) => sendJson(res, 200, { container_id: 'c1', device_id: 'dev1', status: 'Running' })),
      'GET /caas/deployment/d1/log/c1': authed((r, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        if (r.url.searchParams.get('follow') !== 'true') return void res.end(`line one\nline two with ${KEY}\n`);
        res.write('first\n');
        setTimeout(() => res.end('second\n'), 50);
      }),
      'GET /slow/hardware/max-gpus-per-container': later(3000, (_r, res) => sendJson(res, 200, {})),
      'GET /huge/hardware/max-gpus-per-container': hugeBody(2 * 1024 * 1024),
      'GET /down/hardware/max-gpus-per-container': (_r, res) => sendJson(res, 503, { detail: 'maintenance' }),
    });
    const env = { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_IONET_BASE_URL: up.url + '/caas', GATEWAY_IONET_TIMEOUT_MS: '1000', GATEWAY_UPSTREAM_MAX_BYTES: String(1024 * 1024) };
    s = await startGateway(v, { env });
    bad = await startGateway(v, { env: { ...env, GATEWAY_IONET_BASE_URL: up.url + '/slow' } });
    ops = await s.staff('ops', 'admin');
  });
  after(async () => {
    assert.ok(!(s.everything() + bad.everything()).includes(KEY), 'the io.net API key leaked');
    await s.close();
    await bad.close();
    await up.close();
  });

  test('disabled or unconfigured: G57 says so, provider operations refuse, G59 tests a given key without storing it', async () => {
    assert.deepEqual((await ops.get('/api/deployments/settings')).json.data, { provider: 'io.net', enabled: false, configured: false, can_connect: false, hardware_count: 0, total_available: 0 });
    const r = await ops.get('/api/deployments/hardware-types');
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'DEPLOYMENT_NOT_ENABLED');
    const t = await ops.post('/api/deployments/test-connection', { api_key: KEY });
    assert.deepEqual(t.json.data, { hardware_count: 2, total_available: 5 });
    assert.equal((await ops.post('/api/deployments/test-connection', { api_key: 'wrong-key-0123456789' })).json.code, 'DEPLOYMENT_PROVIDER_KEY_REJECTED');
    assert.equal((await ops.post('/api/deployments/settings/test-connection', {})).json.code, 'DEPLOYMENT_NOT_ENABLED');
    await s.services.deployments.setSettings({ enabled: true, apiKey: KEY });
    const stored = await s.ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', 'option:model_deployment.ionet.api_key').executeTakeFirstOrThrow();
    assert.ok(stored.value.startsWith('v1.') && !stored.value.includes(KEY), 'sealed at rest');
    assert.deepEqual((await ops.get('/api/deployments/settings')).json.data, { provider: 'io.net', enabled: true, configured: true, can_connect: true, hardware_count: 2, total_available: 5 });
    assert.deepEqual((await ops.post('/api/deployments/settings/test-connection', {})).json.data, { hardware_count: 2, total_available: 5 });
  });

  test('catalogue: G53 hardware, G54 locations, G51 replicas, G52 names, G55 price', async () => {
    const hw = (await ops.get('/api/deployments/hardware-types')).json.data;
    assert.equal(hw.total, 2);
    assert.equal(hw.total_available, 5);
    assert.equal(hw.hardware_types[0].name, 'H100');
    assert.deepEqual((await ops.get('/api/deployments/locations')).json.data, { locations: [{ id: 1, name: 'United States', iso2: 'US', available: 3 }], total: 3 });
    assert.equal((await ops.get('/api/deployments/available-replicas?hardware_id=1&gpu_count=2')).json.data.replicas[0].available_count, 4);
    assert.equal((await ops.get('/api/deployments/available-replicas')).status, 400);
    assert.deepEqual((await ops.get('/api/deployments/check-name?name=fresh')).json.data, { available: true, name: 'fresh' });
    assert.deepEqual((await ops.get('/api/deployments/check-name?name=taken')).json.data, { available: false, name: 'taken' });
    const price = await ops.post('/api/deployments/price-estimation', { location_ids: [1], hardware_id: 1, replica_count: 1, gpus_per_container: 1, duration_type: 'day', duration_qty: 2 });
    assert.equal(price.status, 200, price.text);
    assert.equal(price.json.data.estimated_cost, 48);
    assert.equal(price.json.data.currency, 'USDC');
    assert.equal(price.json.data.price_breakdown.compute_cost, 45);
    assert.equal(price.json.data.price_breakdown.hourly_rate, 1);
  });

  test('life cycle: G41/G56 list and search, G44 get, G42 create, G45 update, G48 extend, G50 rename, G43 delete', async () => {
    const list = (await ops.get('/api/deployments/?p=1&page_size=10')).json.data;
    assert.equal(list.total, 2);
    assert.equal(list.items[0].status, 'running');
    assert.equal(list.items[0].deployment_name, 'alpha');
    assert.equal(list.items[0].hardware_info, 'NVIDIA H100 x2');
    assert.equal(list.status_counts.running, 1);
    assert.equal(list.status_counts.all, 2);
    const found = (await ops.get('/api/deployments/search?keyword=BET')).json.data;
    assert.deepEqual(found.items.map((d: any) => d.id), ['d2']);
    const one = (await ops.get('/api/deployments/d1')).json.data;
    assert.equal(one.total_gpus, 2);
    assert.equal(one.model_name, 'vllm/vllm-openai');
    assert.equal((await ops.get('/api/deployments/missing')).status, 404);
    const body = { resource_private_name: 'gamma', duration_hours: 1, gpus_per_container: 1, hardware_id: 1, location_ids: [1], container_config: { replica_count: 1 }, registry_config: { image_url: 'vllm/vllm-openai' } };
    assert.deepEqual((await ops.post('/api/deployments/', body)).json.data, { deployment_id: 'd3', status: 'deployment requested', message: 'deployment requested' });
    // Only the known fields reach io.net: unknown ones, at the top and inside the configs, are left out.
    const full = { ...body, container_config: { replica_count: 1, env_variables: { A: '1' }, traffic_port: 8000 }, registry_config: { image_url: 'vllm/vllm-openai', registry_username: 'u' } };
    const extras = { ...full, owner_id: 7, container_config: { ...full.container_config, privileged: true }, registry_config: { ...full.registry_config, mirror: 'x' } };
    assert.equal((await ops.post('/api/deployments/', extras)).status, 200);
    assert.deepEqual(up.to('/caas/deploy').at(-1)!.json, full);
    const refused = await ops.post('/api/deployments/', { ...body, hardware_id: 999 });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.code, 'DEPLOYMENT_PROVIDER_REJECTED');
    assert.match(refused.json.message, /hardware unavailable/);
    for (const broken of [{ ...body, gpus_per_container: 0 }, { ...body, location_ids: [] }, { ...body, registry_config: {} }, { ...body, duration_hours: 'x' }]) {
      assert.equal((await ops.post('/api/deployments/', broken)).json.code, 'INVALID_PARAMETERS', JSON.stringify(broken));
    }
    assert.deepEqual((await ops.put('/api/deployments/d1', { image_url: 'vllm/vllm-openai:v2' })).json.data, { deployment_id: 'd1', status: 'updated' });
    assert.equal((await ops.put('/api/deployments/d1', {})).status, 400);
    assert.equal((await ops.post('/api/deployments/d1/extend', { duration_hours: 2 })).json.data.compute_minutes_remaining, 120);
    assert.equal((await ops.put('/api/deployments/d1/name', { name: 'taken' })).json.code, 'DEPLOYMENT_NAME_TAKEN');
    assert.deepEqual((await ops.put('/api/deployments/d1/name', { name: 'renamed' })).json.data, { id: 'd1', name: 'renamed', status: 'success', message: 'name updated' });
    assert.equal((await ops.delete('/api/deployments/d1')).json.data.status, 'termination requested');
    const audited = await s.ctx.db.selectFrom('gateway_audit').select('operation').execute();
    for (const op of ['G42', 'G43', 'G45', 'G48', 'G50', 'G59']) assert.ok(audited.some((a) => a.operation === op), op);
  });

  test('containers and logs: G46, G47, G49 (page and followed stream); the key is scrubbed from log text', async () => {
    const c = (await ops.get('/api/deployments/d1/containers')).json.data;
    assert.equal(c.total, 1);
    assert.equal(c.containers[0].container_id, 'c1');
    assert.equal(c.containers[0].deployment_id, 'd1');
    assert.deepEqual(c.containers[0].events, [{ time: 1767225600, message: 'started' }]);
    assert.equal((await ops.get('/api/deployments/d1/containers/c1')).json.data.device_id, 'dev1');
    const logs = (await ops.get('/api/deployments/d1/logs?container_id=c1&limit=50')).json.data;
    assert.deepEqual(logs.logs.map((l: any) => l.message), ['line one', 'line two with [redacted]']);
    assert.equal(up.seen.at(-1)!.url.searchParams.get('limit'), '50');
    assert.equal((await ops.get('/api/deployments/d1/logs')).status, 400, 'container_id is required');
    assert.equal((await ops.get('/api/deployments/d1/logs?container_id=c1&limit=5000')).status, 400);
    const followed = await ops.get('/api/deployments/d1/logs?container_id=c1&follow=true');
    assert.match(followed.headers.get('content-type') ?? '', /event-stream/);
    const events = followed.text.split('\n\n').filter(Boolean).map((e) => e.slice(6));
    assert.deepEqual(events.slice(0, 2).map((e) => JSON.parse(e).message), ['first', 'second']);
    assert.equal(events.at(-1), '[DONE]');
  });

  test('provider faults are clear errors: timeout 504, huge 502, 5xx 502; staff only', async () => {
    await bad.services.deployments.setSettings({ enabled: true, apiKey: KEY });
    const badOps = await bad.staff('ops', 'admin');
    assert.equal((await badOps.get('/api/deployments/hardware-types')).status, 504);
    const g57 = (await badOps.get('/api/deployments/settings')).json.data;
    assert.equal(g57.can_connect, false);
    assert.equal(g57.error_code, 'UPSTREAM_TIMEOUT');
    for (const [base, status, code] of [['/huge', 502, 'UPSTREAM_BODY_TOO_LARGE'], ['/down', 502, 'UPSTREAM_BAD_STATUS']] as const) {
      const g = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_IONET_BASE_URL: up.url + base, GATEWAY_UPSTREAM_MAX_BYTES: String(1024 * 1024) } });
      try {
        await g.services.deployments.setSettings({ enabled: true, apiKey: KEY });
        const r = await (await g.staff('ops', 'admin')).get('/api/deployments/hardware-types');
        assert.equal(r.status, status, base + r.text);
        assert.equal(r.json.code, code);
      } finally {
        await g.close();
      }
    }
    const svc = await s.staff('svc', 'service', { grant: ['authz.ChannelRead'] });
    assert.equal((await svc.get('/api/deployments/settings')).json.code, 'GW_STAFF_REQUIRED');
    const closed = await startGateway(v, { env: { GATEWAY_IONET_BASE_URL: up.url + '/caas' } });
    try {
      const r = await (await closed.staff('ops', 'admin')).post('/api/deployments/test-connection', { api_key: KEY });
      assert.equal(r.json.code, 'UPSTREAM_ADDRESS_REFUSED');
    } finally {
      await closed.close();
    }
  });

  test('the deployment-settings CLI switches deployments and never takes the key on the command line', async () => {
    const off = await gatewayCli(s, {}, 'deployment-settings', '--enabled', 'false');
    assert.equal(off.error, null);
    assert.equal((await ops.get('/api/deployments/settings')).json.data.enabled, false);
    assert.match((await gatewayCli(s, {}, 'deployment-settings', '--api-key', KEY)).error ?? '', /standard input/);
    assert.match((await gatewayCli(s, {}, 'deployment-settings', '--enabled', 'maybe')).error ?? '', /true or false/);
    assert.equal((await gatewayCli(s, {}, 'deployment-settings', '--enabled', 'true')).error, null);
    assert.equal((await ops.get('/api/deployments/settings')).json.data.can_connect, true);
  });
});
