import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { variants } from '../helpers/services.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { startFakeUpstream, sendSse, type FakeUpstream } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, streamedText } from '../helpers/relay.js';

// Sixteen concurrent 60 MB answers grew the process by 2,520 MB: nothing bounded the whole answers held at
// once. Here the cap is 8 MB and twelve 3 MB answers are read at the same time.

const MB = 1024 * 1024;
const CAP = 8 * MB;
const ANSWER = 3 * MB;
const CALLS = 12;
const KEY = 'sk-relay-memory-KEY-0123456789';

function completion(bytes: number): Buffer {
  const body = { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(bytes) }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };
  return Buffer.from(JSON.stringify(body));
}

/** Half of every answer at once, the rest once every call has started (or after 1 s): the answers overlap. */
function overlapping(sized: boolean) {
  const waiting: (() => void)[] = [];
  const answer = completion(ANSWER);
  return (_r: unknown, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json', ...(sized ? { 'content-length': String(answer.length) } : {}) });
    res.write(answer.subarray(0, answer.length / 2));
    const rest = () => res.end(answer.subarray(answer.length / 2));
    waiting.push(rest);
    if (waiting.length === CALLS) for (const w of waiting.splice(0)) w();
    else setTimeout(() => waiting.includes(rest) && (waiting.splice(waiting.indexOf(rest), 1), rest()), 1000);
  };
}

describe('relay memory: a cap on the answers held at once [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;

  before(async () => {
    up = await startFakeUpstream({
      'POST /chunked/v1/chat/completions': overlapping(false),
      'POST /sized/v1/chat/completions': overlapping(true),
      // 16 MB streamed in 64 KiB pieces: twice the cap, never held whole.
      'POST /stream/v1/chat/completions': (_r, res) => {
        const piece = 'y'.repeat(64 * 1024);
        const chunk = (content: string, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
        sendSse(res, [...Array.from({ length: 256 }, () => chunk(piece)), chunk('', 'stop')]);
      },
    });
    s = await startGateway(variants()[0]!, {
      env: { ...RELAY_ENV, GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES: String(CAP), GATEWAY_RELAY_MAX_RESPONSE_BYTES: String(64 * MB), GATEWAY_BREAKER_FAILURES: '1', GATEWAY_RELAY_ROUTE_CACHE_MS: '0' },
    });
    const root = await s.staff('root', 'root');
    for (const name of ['chunked', 'sized', 'stream']) {
      assert.equal((await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: name, key: KEY } })).status, 200);
    }
    await s.services.ratios.setCurrent({ model_ratio: { chunked: 1, sized: 1, stream: 1 } });
  });
  after(async () => {
    await s.close();
    await up.close();
  });

  for (const model of ['chunked', 'sized']) {
    test(`concurrent ${model} answers past the cap: some refused with relay_busy, the channel stays enabled`, async () => {
      const chat = { model, messages: [{ role: 'user', content: 'hi' }] };
      const replies = await Promise.all(Array.from({ length: CALLS }, () => relay(s.url, '/chat/completions', chat)));
      const busy = replies.filter((r) => r.status === 503);
      const served = replies.filter((r) => r.status === 200);
      assert.equal(busy.length + served.length, CALLS, `statuses: ${replies.map((r) => r.status)}`);
      assert.ok(busy.length > 0, 'some calls are refused');
      assert.ok(served.length > 0, 'the calls that fit are served');
      for (const r of busy) assert.equal(r.json.error.code, 'relay_busy');
      for (const r of served) assert.equal(r.json.choices[0].message.content.length, ANSWER);
      assert.ok(s.ctx.upstreamBudget.peak <= CAP, `peak ${s.ctx.upstreamBudget.peak}`);
      assert.equal(s.ctx.upstreamBudget.used, 0, 'every reservation is released');
      const metrics = await (await fetch(`${s.url}/metrics`)).text().catch(() => '');
      assert.match(metrics, /^gateway_upstream_buffered_bytes({[^}]*})? 0$/m);
      // Not the channel's failure: no breaker opened (one counted failure would have, here).
      const channel = await s.ctx.db.selectFrom('channels').select('status').where('name', '=', model).executeTakeFirstOrThrow();
      assert.equal(channel.status, 1);
      const next = await relay(s.url, '/chat/completions', chat);
      assert.equal(next.status, 200);
    });
  }

  test('a streamed answer larger than the cap passes through', async () => {
    const r = await relay(s.url, '/chat/completions', { model: 'stream', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 200);
    assert.equal(streamedText(r.events).length, 256 * 64 * 1024);
    assert.equal(r.summary.error_code, null);
  });
});
