import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';

const KEY = 'ollama-SECRET-key-0123456789';

/** Server-Sent Events of a G24 answer, parsed. */
function events(text: string): any[] {
  return text.split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => b.slice(6)).map((d) => (d === '[DONE]' ? '[DONE]' : JSON.parse(d)));
}

eachDatabase('gateway Ollama local models (G22–G25)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let closed: GatewayServer;
  let root: StaffClient;
  let channelId: number;
  let hangClosed = false;

  before(async () => {
    const ndjson = (res: http.ServerResponse, lines: unknown[], end = true) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (const l of lines) res.write(JSON.stringify(l) + '\n');
      if (end) res.end();
    };
    up = await startFakeUpstream({
      'POST /api/pull': (r: Seen, res) => {
        if (r.headers.authorization !== `Bearer ${KEY}`) return sendJson(res, 401, { error: `unauthorized ${r.headers.authorization}` });
        const model = r.json?.model;
        if (r.json?.stream === false) return model === 'llama3:8b' ? sendJson(res, 200, { status: 'success' }) : sendJson(res, 500, { error: 'pull model manifest: file does not exist' });
        if (model === 'llama3:8b') return ndjson(res, [{ status: 'pulling manifest' }, { status: 'downloading', digest: 'sha256:abc', total: 100, completed: 50 }, { status: 'verifying sha256 digest' }, { status: 'success' }]);
        if (model === 'bad-model') return ndjson(res, [{ status: 'pulling manifest' }, { error: `pull model manifest: file does not exist (key ${KEY})` }]);
        if (model === 'cut') {
          ndjson(res, [{ status: 'pulling manifest' }], false);
          return void setTimeout(() => res.destroy(), 50);
        }
        if (model === 'stall') return ndjson(res, [{ status: 'pulling manifest' }], false);
        if (model === 'hang') {
          ndjson(res, [{ status: 'pulling manifest' }], false);
          const t = setInterval(() => res.write(JSON.stringify({ status: 'downloading', completed: 1 }) + '\n'), 50);
          res.on('close', () => {
            clearInterval(t);
            hangClosed = true;
          });
          return;
        }
        sendJson(res, 404, { error: 'model not found' });
      },
      'DELETE /api/delete': (r, res) => (r.json?.model === 'llama3:8b' ? sendJson(res, 200, {}) : sendJson(res, 404, { error: `model '${r.json?.model}' not found` })),
      'GET /api/version': (r, res) => (r.headers.authorization === `Bearer ${KEY}` ? sendJson(res, 200, { version: '0.5.7' }) : sendJson(res, 401, {})),
    });
    s = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_OLLAMA_STREAM_IDLE_MS: '400' } });
    closed = await startGateway(v);
    root = await s.staff('root', 'root');
    channelId = (await root.post('/api/channel/', { mode: 'single', channel: { type: 4, name: 'ollama', base_url: up.url, models: 'llama3:8b', key: KEY } })).json.data.ids[0];
  });
  after(async () => {
    const all = s.everything() + closed.everything();
    assert.ok(!all.includes(KEY), 'the channel key leaked');
    await s.close();
    await closed.close();
    await up.close();
  });

  const body = (model_name: string, channel_id = channelId) => ({ channel_id, model_name });

  test('G23 pull, G22 delete and G25 version against Ollama; failures keep the upstream status', async () => {
    const pulled = await root.post('/api/channel/localmodel/pull', body('llama3:8b'));
    assert.equal(pulled.status, 200, pulled.text);
    assert.equal(pulled.json.message, 'Model llama3:8b pulled successfully');
    assert.deepEqual(up.seen.at(-1)!.json, { model: 'llama3:8b', stream: false });
    const missing = await root.post('/api/channel/localmodel/pull', body('nope'));
    assert.equal(missing.status, 502);
    assert.equal(missing.json.data.upstream_status, 500);
    const del = await root.request('DELETE', '/api/channel/localmodel/delete', body('llama3:8b'));
    assert.equal(del.status, 200, del.text);
    assert.equal(del.json.message, 'Model llama3:8b deleted successfully');
    const delMissing = await root.request('DELETE', '/api/channel/localmodel/delete', body('other'));
    assert.equal(delMissing.json.data.upstream_status, 404);
    const ver = await root.get(`/api/channel/localmodel/version/${channelId}`);
    assert.equal(ver.status, 200, ver.text);
    assert.equal(ver.json.version, '0.5.7');
    assert.equal(ver.json.data.version, '0.5.7');
    const audit = await s.ctx.db.selectFrom('gateway_audit').select('operation').where('channel_id', '=', channelId).execute();
    for (const op of ['G22', 'G23', 'G25']) assert.ok(audit.some((a) => a.operation === op), op);
  });

  test('G24 streams progress as SSE and ends with the outcome and [DONE]', async () => {
    const r = await root.post('/api/channel/localmodel/pull/stream', body('llama3:8b'));
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    const e = events(r.text);
    assert.deepEqual(e.slice(0, 2), [{ status: 'pulling manifest' }, { status: 'downloading', digest: 'sha256:abc', total: 100, completed: 50 }]);
    assert.deepEqual(e.at(-2), { success: true, message: 'Model llama3:8b pulled successfully' });
    assert.equal(e.at(-1), '[DONE]');
  });

  test('G24 error line, broken stream and stalled stream end with an error event; the key is scrubbed', async () => {
    for (const [model, error] of [['bad-model', /file does not exist/], ['cut', /unreachable/], ['stall', /timeout/]] as const) {
      const r = await root.post('/api/channel/localmodel/pull/stream', body(model));
      assert.equal(r.status, 200, model);
      const e = events(r.text);
      const final = e.at(-2);
      assert.equal(final.success, false, model + r.text);
      assert.match(`${final.error} ${final.message}`, error, model);
      assert.equal(e.at(-1), '[DONE]');
    }
  });

  test('G24 failures before the stream starts are ordinary errors; a client that leaves aborts the upstream pull', async () => {
    const unknownModel = await root.post('/api/channel/localmodel/pull/stream', body('zzz'));
    assert.equal(unknownModel.status, 502);
    assert.equal(unknownModel.json.code, 'UPSTREAM_BAD_STATUS');
    const abort = new AbortController();
    const res = await fetch(`${s.url}/api/channel/localmodel/pull/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${root.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body('hang')),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    abort.abort();
    for (let i = 0; i < 50 && !hangClosed; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(hangClosed, 'the upstream pull was not aborted');
  });

  test('bad input, wrong channel type, unknown channel, refused address', async () => {
    for (const b of [{}, { channel_id: channelId }, { model_name: 'x' }, body('bad name!'), body(''), { channel_id: 'x', model_name: 'm' }]) {
      const r = await root.post('/api/channel/localmodel/pull', b);
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.equal(r.json.code, 'INVALID_PARAMETERS');
    }
    const openai = (await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'o', base_url: up.url, models: 'm', key: 'sk-x-0123456789' } })).json.data.ids[0];
    assert.equal((await root.post('/api/channel/localmodel/pull', body('llama3:8b', openai))).json.code, 'CHANNEL_NOT_OLLAMA');
    assert.equal((await root.get(`/api/channel/localmodel/version/${openai}`)).json.code, 'CHANNEL_NOT_OLLAMA');
    assert.equal((await root.post('/api/channel/localmodel/pull/stream', body('llama3:8b', 999999))).status, 404);
    const admin = await s.staff('ops', 'admin');
    assert.equal((await admin.get(`/api/channel/localmodel/version/${channelId}`)).status, 403, 'ChannelSensitiveWrite is required');
    const c = await closed.staff('root', 'root');
    const id = (await c.post('/api/channel/', { mode: 'single', channel: { type: 4, name: 'o', base_url: up.url, models: 'm', key: KEY } })).json.data.ids[0];
    assert.equal((await c.post('/api/channel/localmodel/pull/stream', body('llama3:8b', id))).json.code, 'UPSTREAM_ADDRESS_REFUSED');
  });
});
