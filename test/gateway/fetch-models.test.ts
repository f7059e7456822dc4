import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, hugeBody, sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';

const KEY = 'sk-fetch-SECRET-0123456789abcdef';
const KEY2 = 'sk-fetch-SECOND-0123456789abcdef';
const GEMINI_KEY = 'AIza-gemini-SECRET-0123456789';
const ANTHROPIC_KEY = 'sk-ant-SECRET-0123456789abcdef';

eachDatabase('gateway fetch models (G16, G17)', (v) => {
  let s: GatewayServer;
  let closed: GatewayServer;
  let up: FakeUpstream;
  let root: StaffClient;
  let admin: StaffClient;

  before(async () => {
    up = await startFakeUpstream({
      'GET /v1/models': (r, res) => {
        if (r.headers['x-api-key']) {
          if (r.headers['x-api-key'] !== ANTHROPIC_KEY || r.headers['anthropic-version'] !== '2023-06-01') return sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
          const after = r.url.searchParams.get('after_id');
          return sendJson(res, 200, after ? { data: [{ id: 'claude-3-haiku' }], has_more: false, last_id: 'claude-3-haiku' } : { data: [{ id: 'claude-sonnet-4' }, { id: 'claude-opus-4' }], has_more: true, last_id: 'claude-opus-4' });
        }
        const auth = r.headers.authorization;
        if (auth !== `Bearer ${KEY}` && auth !== `Bearer ${KEY2}`) return sendJson(res, 401, { error: { message: `Incorrect API key provided: ${auth?.slice(7)}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
        sendJson(res, 200, { object: 'list', data: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'gpt-4o' }, { id: ' ' }] });
      },
      'GET /v1beta/models': (r, res) => {
        if (r.headers['x-goog-api-key'] !== GEMINI_KEY || r.url.search.includes(GEMINI_KEY)) return sendJson(res, 403, { error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } });
        const token = r.url.searchParams.get('pageToken');
        sendJson(res, 200, token ? { models: [{ name: 'models/gemini-2.5-flash' }] } : { models: [{ name: 'models/gemini-2.5-pro' }], nextPageToken: 'p2' });
      },
      'GET /api/tags': (_r, res) => sendJson(res, 200, { models: [{ name: 'llama3:8b', model: 'llama3:8b', size: 1 }, { name: 'qwen2:7b' }] }),
      'GET /openai/models': (r, res) => {
        if (r.headers['api-key'] !== KEY || r.url.searchParams.get('api-version') !== '2024-10-21') return sendJson(res, 401, { error: { code: '401', message: 'Access denied' } });
        sendJson(res, 200, { data: [{ id: 'gpt-4o' }, { id: 'text-embedding-3-small' }] });
      },
      'GET /slow/v1/models': later(3000, (_r, res) => sendJson(res, 200, { data: [] })),
      'GET /huge/v1/models': hugeBody(2 * 1024 * 1024),
      'GET /text/v1/models': (_r, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>gateway error</html>');
      },
      'GET /busy/v1/models': (_r, res) => sendJson(res, 429, { error: { message: 'Rate limit reached' } }),
    });
    s = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_UPSTREAM_MAX_BYTES: String(1024 * 1024) } });
    closed = await startGateway(v);
    root = await s.staff('root', 'root');
    admin = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = s.everything() + '\n' + closed.everything();
    for (const k of [KEY, KEY2, GEMINI_KEY, ANTHROPIC_KEY]) assert.ok(!all.includes(k), `key ${k.slice(0, 12)} leaked`);
    await s.close();
    await closed.close();
    await up.close();
  });

  const fetchModels = (c: StaffClient, body: unknown) => c.post('/api/channel/fetch_models', body);

  test('G16 lists models of each adapter family from unsaved credentials', async () => {
    const cases: [number, string, string[]][] = [
      [1, KEY, ['gpt-4o', 'gpt-4o-mini']],
      [43, KEY, ['gpt-4o', 'gpt-4o-mini']],
      [14, ANTHROPIC_KEY, ['claude-sonnet-4', 'claude-opus-4', 'claude-3-haiku']],
      [24, GEMINI_KEY, ['gemini-2.5-pro', 'gemini-2.5-flash']],
      [4, '', ['llama3:8b', 'qwen2:7b']],
      [3, KEY, ['gpt-4o', 'text-embedding-3-small']],
    ];
    for (const [type, key, models] of cases) {
      const r = await fetchModels(root, { type, base_url: up.url + '/', key: key || 'unused-ollama-key' });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.deepEqual(r.json.data, models, `type ${type}`);
    }
    const codex = await fetchModels(root, { type: 57, key: JSON.stringify({ access_token: 'at-0123456789', account_id: 'acc' }) });
    assert.ok(codex.json.data.includes('gpt-5-codex'), codex.text);
  });

  test('G16 upstream failures: 401 (key scrubbed), 429, timeout, huge body, non-JSON', async () => {
    const wrong = await fetchModels(root, { type: 1, base_url: up.url, key: 'sk-wrong-key-0000000000' });
    assert.equal(wrong.status, 502, wrong.text);
    assert.equal(wrong.json.code, 'UPSTREAM_BAD_STATUS');
    assert.equal(wrong.json.data.upstream_status, 401);
    assert.ok(!wrong.text.includes('sk-wrong-key-0000000000'), 'the upstream echoed the key and it came back');
    assert.match(wrong.json.message, /\[redacted\]/);
    const busy = await fetchModels(root, { type: 1, base_url: up.url + '/busy', key: KEY });
    assert.equal(busy.json.data.upstream_status, 429);
    const slow = await fetchModels(root, { type: 1, base_url: up.url + '/slow', key: KEY });
    assert.equal(slow.status, 504, slow.text);
    assert.equal(slow.json.code, 'UPSTREAM_TIMEOUT');
    const huge = await fetchModels(root, { type: 1, base_url: up.url + '/huge', key: KEY });
    assert.equal(huge.json.code, 'UPSTREAM_BODY_TOO_LARGE', huge.text);
    const html = await fetchModels(root, { type: 1, base_url: up.url + '/text', key: KEY });
    assert.equal(html.json.code, 'UPSTREAM_BAD_RESPONSE', html.text);
    const down = await fetchModels(root, { type: 1, base_url: 'http://127.0.0.1:1', key: KEY });
    assert.equal(down.json.code, 'UPSTREAM_UNREACHABLE', down.text);
  });

  test('G16 refuses private addresses unless allowed: literal, a name resolving to 127.0.0.1, metadata', async () => {
    const c = await closed.staff('root2', 'root');
    const before = up.seen.length;
    for (const base of [up.url, `http://localhost:${up.port}`, 'http://169.254.169.254', 'http://[::1]:1', 'http://[::127.0.0.1]:1', 'http://[64:ff9b::127.0.0.1]:1', 'http://[2002:7f00:1::]:1']) {
      const r = await fetchModels(c, { type: 1, base_url: base, key: KEY });
      assert.equal(r.status, 400, base + r.text);
      assert.equal(r.json.code, 'UPSTREAM_ADDRESS_REFUSED');
    }
    assert.equal(up.seen.length, before, 'a refused request reached the upstream');
    // The name is refused on the allowing server too: only the 127.0.0.1 literal is on its list... as an address.
    const named = await fetchModels(root, { type: 1, base_url: `http://localhost:${up.port}`, key: KEY });
    assert.equal(named.status, 200, 'an allow-listed address is reachable by any name resolving to it');
  });

  test('G16 bad input and permissions', async () => {
    for (const body of [{}, { type: 1 }, { type: 'x', key: 'k' }, { type: 1, key: '' }, { type: 1, key: 'k', base_url: 'ftp://x' }, { type: 99, key: 'k' }, { type: 8, key: 'k' }]) {
      const r = await fetchModels(root, body);
      assert.equal(r.status, 400, JSON.stringify(body) + r.text);
      assert.ok(r.json.code, r.text);
    }
    const denied = await fetchModels(admin, { type: 1, base_url: up.url, key: KEY });
    assert.equal(denied.status, 403);
    assert.equal(denied.json.code, 'GW_FORBIDDEN');
  });

  test('G17 uses the stored channel: base URL, first enabled key of a multi-key channel, proxy-less', async () => {
    const created = await root.post('/api/channel/', { mode: 'multi_to_single', channel: { type: 1, name: 'mk', base_url: up.url, models: 'gpt-4o', key: `sk-disabled-first-000000000\n${KEY2}` } });
    const id = created.json.data.ids[0];
    await root.post('/api/channel/multi_key/manage', { channel_id: id, action: 'disable_key', key_index: 0 });
    const r = await admin.get(`/api/channel/fetch_models/${id}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data, ['gpt-4o', 'gpt-4o-mini']);
    assert.equal(up.seen.at(-1)!.headers.authorization, `Bearer ${KEY2}`);
    await root.post('/api/channel/multi_key/manage', { channel_id: id, action: 'disable_key', key_index: 1 });
    const none = await admin.get(`/api/channel/fetch_models/${id}`);
    assert.equal(none.json.code, 'CHANNEL_NO_AVAILABLE_KEY', none.text);
    assert.equal((await admin.get('/api/channel/fetch_models/999999')).status, 404);
    assert.equal((await admin.get('/api/channel/fetch_models/abc')).status, 400);
    const audit = await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', 'in', ['G16', 'G17']).execute();
    assert.ok(audit.some((a) => a.operation === 'G17' && Number(a.channel_id) === id && JSON.parse(a.detail).count === 2));
    assert.ok(audit.some((a) => a.operation === 'G16' && JSON.parse(a.detail).failed === 'UPSTREAM_BAD_STATUS'));
  });

  test('G17 header_override applies with {api_key} substituted', async () => {
    const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'hdr', base_url: up.url, models: 'm', key: KEY, header_override: JSON.stringify({ 'X-Custom': 'k={api_key}' }) } });
    const r = await admin.get(`/api/channel/fetch_models/${created.json.data.ids[0]}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(up.seen.at(-1)!.headers['x-custom'], `k=${KEY}`);
  });
});
