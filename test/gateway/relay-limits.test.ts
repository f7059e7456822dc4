import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { variants } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { hugeBody, sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, relayToken, streamedText } from '../helpers/relay.js';

const KEY = 'sk-relay-limits-KEY-0123456789';
const chunk = (content: string) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const ok = (_r: Seen, res: http.ServerResponse) => sendSse(res, [chunk('fine'), { ...chunk(''), choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]);

describe('relay limits: deadlines, caps and back-pressure [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  let flooded = 0;

  before(async () => {
    up = await startFakeUpstream({
      'POST /ok/v1/chat/completions': ok,
      // Headers only after 5 s: past the first-byte deadline.
      'POST /stall/v1/chat/completions': (r, res) => void setTimeout(() => ok(r, res), 5000),
      // One chunk, then silence: past the idle deadline once output began.
      'POST /quiet/v1/chat/completions': (_r, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk('first '))}\n\n`);
      },
      'POST /huge/v1/chat/completions': hugeBody(4 * 1024 * 1024),
      // Writes 16 KiB chunks as fast as the gateway takes them, counting what it wrote.
      'POST /flood/v1/chat/completions': (_r, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const line = `data: ${JSON.stringify(chunk('x'.repeat(16 * 1024)))}\n\n`;
        let stopped = false;
        res.on('close', () => (stopped = true));
        const pump = () => {
          while (!stopped && flooded < 256 * 1024 * 1024) {
            flooded += line.length;
            if (!res.write(line)) return void res.once('drain', pump);
          }
        };
        pump();
      },
    });
    s = await startGateway(variants()[0]!, {
      env: { ...RELAY_ENV, GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: '300', GATEWAY_RELAY_IDLE_TIMEOUT_MS: '300', GATEWAY_RELAY_MAX_RESPONSE_BYTES: String(1024 * 1024 * 1024), GATEWAY_RELAY_ROUTE_CACHE_MS: '0' },
    });
    root = await s.staff('root', 'root');
    const models: Record<string, number> = {};
    for (const [name, model, priority] of [['stall', 'first-byte', 5], ['ok', 'first-byte', 0], ['quiet', 'idle', 0], ['huge', 'huge', 5], ['ok', 'huge', 0], ['flood', 'flood', 0]] as const) {
      assert.equal((await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: model, key: KEY, priority } })).status, 200);
      models[model] = 1;
    }
    await s.services.ratios.setCurrent({ model_ratio: models });
  });
  after(async () => {
    assert.ok(!s.everything().includes(KEY));
    await s.close();
    await up.close();
  });

  const chat = (model: string, stream = true) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });

  test('no first byte in time: the next channel answers; the attempt is logged as a timeout', async () => {
    const r = await relay(s.url, '/chat/completions', chat('first-byte'));
    assert.equal(streamedText(r.events), 'fine');
    assert.deepEqual(r.summary.attempts.map((a: any) => a.error_code), ['relay_upstream_timeout', null]);
    // Well before the stalled channel would have answered (a loaded machine may take a second or two).
    assert.ok(r.summary.total_ms < 4500, `took ${r.summary.total_ms} ms`);
  });

  test('silence after output began ends the stream with an error event, not another channel', async () => {
    const r = await relay(s.url, '/chat/completions', chat('idle'));
    assert.equal(streamedText(r.events), 'first ');
    assert.equal(r.events.at(-1).error.code, 'relay_stream_interrupted');
    assert.equal(r.summary.status, 502);
  });

  test('an answer over the size cap is a clear 502 and is not retried elsewhere', async () => {
    const capped = await startGateway(variants()[0]!, { env: { ...RELAY_ENV, GATEWAY_RELAY_MAX_RESPONSE_BYTES: String(1024 * 1024) }, shareWith: s });
    try {
      const before = up.seen.filter((x) => x.path.startsWith('/ok/')).length;
      const r = await relay(capped.url, '/chat/completions', chat('huge', false));
      assert.equal(r.status, 502);
      assert.equal(r.json.error.code, 'relay_upstream_bad_response');
      assert.equal(up.seen.filter((x) => x.path.startsWith('/ok/')).length, before);
    } finally {
      await capped.close();
    }
  });

  test('a caller that stops reading holds the upstream back: the gateway never buffers the whole stream', async () => {
    const gone = new AbortController();
    const res = await fetch(`${s.url}/relay/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${await relayToken()}`, 'content-type': 'application/json' }, body: JSON.stringify(chat('flood')), signal: gone.signal });
    const reader = res.body!.getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 1000));
    const held = flooded;
    await new Promise((r) => setTimeout(r, 500));
    gone.abort();
    await reader.cancel().catch(() => {});
    // Socket buffers on three connections hold a few MB at most; a gateway that buffered would take all 256 MB.
    assert.ok(held < 24 * 1024 * 1024, `the upstream wrote ${Math.round(held / 1048576)} MB while the caller read nothing`);
    assert.ok(flooded - held < 1024 * 1024, 'the upstream stays held while the caller is paused');
  });
});
