import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, hugeBody, sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';

const OR_KEY = 'sk-or-SECRET-0123456789abcdef';

eachDatabase('gateway ratio sync (G82, G83)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let closed: GatewayServer;
  let root: StaffClient;
  let flaky = 0;

  before(async () => {
    up = await startFakeUpstream({
      'GET /a/api/ratio_config': (_r, res) => sendJson(res, 200, { success: true, data: { model_ratio: { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075, unknown: 37.5 }, completion_ratio: { 'gpt-4o': 4, unknown: 1 }, model_price: { 'dall-e-3': 0.04 } } }),
      'GET /b/api/pricing': (_r, res) => sendJson(res, 200, { success: true, data: [{ model_name: 'gpt-4o', quota_type: 0, model_ratio: 2.5, completion_ratio: 4 }, { model_name: 'dall-e-3', quota_type: 1, model_price: 0.04 }] }),
      'GET /or/v1/models': (r, res) =>
        r.headers.authorization === `Bearer ${OR_KEY}` ? sendJson(res, 200, { data: [{ id: 'openai/gpt-4o', pricing: { prompt: '0.0000025', completion: '0.00001' } }] }) : sendJson(res, 401, { error: { message: `bad key ${r.headers.authorization}` } }),
      'GET /md/api.json': (_r, res) => sendJson(res, 200, { openai: { models: { 'gpt-4o': { cost: { input: 2.5, output: 10, cache_read: 1.25 } } } } }),
      'GET /flaky/api/pricing': (_r, res) => (++flaky < 3 ? sendJson(res, 503, { error: 'busy' }) : sendJson(res, 200, { success: true, data: [{ model_name: 'm', quota_type: 0, model_ratio: 1 }] })),
      'GET /down/api/pricing': (_r, res) => sendJson(res, 500, { error: 'down' }),
      'GET /slow/api/pricing': later(3000, (_r, res) => sendJson(res, 200, {})),
      'GET /huge/api/pricing': hugeBody(11 * 1024 * 1024),
      'GET /html/api/pricing': (_r, res) => void res.end('<html>'),
    });
    s = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1' } });
    closed = await startGateway(v);
    root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent({ model_ratio: { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075 }, completion_ratio: { 'gpt-4o': 4 } });
  });
  after(async () => {
    assert.ok(!(s.everything() + closed.everything()).includes(OR_KEY), 'the channel key leaked');
    await s.close();
    await closed.close();
    await up.close();
  });

  test('G82 lists channels with a base URL, without keys, and the presets', async () => {
    const id = (await root.post('/api/channel/', { mode: 'single', channel: { type: 20, name: 'router', base_url: up.url + '/or', models: 'm', key: OR_KEY } })).json.data.ids[0];
    await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'no-base', models: 'm', key: 'sk-x-0123456789' } });
    const r = await root.get('/api/ratio_sync/channels');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data.map((c: any) => c.id), [id, -100, -101]);
    assert.deepEqual(Object.keys(r.json.data[0]).sort(), ['base_url', 'id', 'name', 'status', 'type']);
    assert.equal((await (await s.staff('ops', 'admin')).get('/api/ratio_sync/channels')).status, 403);
  });

  test('G83 compares each source with the gateway: differences, same values, confidence, prices, test results', async () => {
    const router = (await root.get('/api/ratio_sync/channels')).json.data[0].id;
    const r = await root.post('/api/ratio_sync/fetch', {
      channel_ids: [router],
      upstreams: [
        { name: 'A', base_url: up.url + '/a', endpoint: '/api/ratio_config' },
        { name: 'B', base_url: up.url + '/b' },
        { name: 'MD', base_url: up.url + '/md', endpoint: '/api.json' },
      ],
    });
    assert.equal(r.status, 200, r.text);
    const d = r.json.data;
    assert.deepEqual(d.test_results.map((t: any) => [t.name, t.status]), [[`router(${router})`, 'success'], ['A', 'success'], ['B', 'success'], ['MD', 'success']]);
    assert.deepEqual(d.differences['gpt-4o'].model_ratio, { current: 1.25, upstreams: { A: 'same', B: 2.5, MD: 'same' }, confidence: { A: true, B: true, MD: true } });
    assert.equal(d.differences['openai/gpt-4o'].model_ratio.upstreams[`router(${router})`], 1.25);
    assert.equal(d.differences['openai/gpt-4o'].completion_ratio.upstreams[`router(${router})`], 4);
    assert.equal(d.differences['gpt-4o'].cache_ratio.upstreams.MD, 0.5);
    assert.equal(d.differences['gpt-4o-mini'], undefined, 'no source differs from the gateway');
    assert.equal(d.differences.unknown.model_ratio.confidence.A, false, 'the 37.5 / 1 placeholder is not trusted');
    assert.deepEqual(d.prices['dall-e-3'], { current: {}, upstreams: { A: { model_price: 0.04 }, B: { model_price: 0.04 } } });
    assert.equal(up.seen.find((x) => x.path === '/or/v1/models')!.headers.authorization, `Bearer ${OR_KEY}`);
  });

  test('G83 retries busy sources, reports failing, slow, huge and unreadable ones, and refuses private addresses unless allowed', async () => {
    const r = await root.post('/api/ratio_sync/fetch', {
      timeout: 1,
      upstreams: ['flaky', 'down', 'slow', 'huge', 'html'].map((n) => ({ name: n, base_url: `${up.url}/${n}` })),
    });
    assert.equal(r.status, 200, r.text);
    const by = Object.fromEntries(r.json.data.test_results.map((t: any) => [t.name, t]));
    assert.equal(by.flaky.status, 'success');
    assert.equal(flaky, 3, 'two retries');
    assert.match(by.down.error, /HTTP 500/);
    assert.equal(up.to('/down/api/pricing').length, 3);
    assert.match(by.slow.error, /timeout/);
    assert.match(by.huge.error, /too_large/);
    assert.match(by.html.error, /not a ratio/);
    const c = await closed.staff('root', 'root');
    const refused = await c.post('/api/ratio_sync/fetch', { upstreams: [{ name: 'x', base_url: up.url + '/a', endpoint: '/api/ratio_config' }] });
    assert.match(refused.json.data.test_results[0].error, /refused/);
  });

  test('G83 bad input', async () => {
    for (const body of [{}, { channel_ids: [] }, { upstreams: [{ name: '', base_url: 'x' }] }, { timeout: 0, channel_ids: [-100] }, { channel_ids: ['a'] }, { upstreams: [{ name: 'n', base_url: up.url, endpoint: 'noslash' }] }]) {
      const r = await root.post('/api/ratio_sync/fetch', body);
      assert.equal(r.status, 400, JSON.stringify(body) + r.text);
    }
    assert.equal((await root.post('/api/ratio_sync/fetch', { channel_ids: [999999] })).status, 404);
    assert.equal((await root.post('/api/ratio_sync/fetch', { channel_ids: Array.from({ length: 51 }, (_, i) => i + 1) })).status, 400);
  });
});
