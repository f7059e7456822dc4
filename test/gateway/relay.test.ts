import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, relayToken, streamedText } from '../helpers/relay.js';

const KEY = 'sk-relay-KEY-0123456789abcdef';
const PRICES = { model_ratio: { 'gpt-4o': 1.25, 'gpt-4o-mini': 0.075, 'text-embedding-3-small': 0.01 }, completion_ratio: { 'gpt-4o': 4 }, cache_ratio: { 'gpt-4o': 0.5 }, model_price: { 'per-call': 0.02 }, group_ratio: { vip: 0.5 } };

function completion(model: string, content: string, usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 40 } }) {
  return { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage };
}

function chunk(content: string | null, finish: string | null = null) {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] };
}

/** An OpenAI-compatible upstream whose behaviour is the first path segment (each channel's base URL picks one). */
function behaviour(name: string): (r: Seen, res: http.ServerResponse) => void {
  return (r, res) => {
    if (name === 'ok') {
      if (r.json?.stream) return sendSse(res, [chunk('he'), chunk('llo'), chunk(null, 'stop'), { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }]);
      return sendJson(res, 200, completion(r.json?.model, `served by ok (${r.headers.authorization?.slice(-6)})`));
    }
    if (name === 'other') return sendJson(res, 200, completion(r.json?.model, 'served by other'));
    if (name === 'fail500') return sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } });
    if (name === 'rate') return sendJson(res, 429, { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } });
    if (name === 'bad400') return sendJson(res, 400, { error: { message: 'messages is too long', code: 'context_length_exceeded' } });
    if (name === 'badkey') return sendJson(res, 401, { error: { message: `Incorrect API key provided: ${r.headers.authorization?.slice(7)}`, code: 'invalid_api_key' } });
    if (name === 'err200') return sendJson(res, 200, { error: { message: 'model overloaded', type: 'server_error' } });
    if (name === 'empty') return sendSse(res, []);
    if (name === 'cutfirst') return sendSse(res, [], { cut: true });
    if (name === 'cutmid') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('partial '))}\n\n`);
      setTimeout(() => res.destroy(), 50);
      return;
    }
    if (name === 'slow') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk('tick '))}\n\n`);
      const timer = setInterval(() => res.write(`data: ${JSON.stringify(chunk('tick '))}\n\n`), 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    sendJson(res, 404, { error: { message: 'unknown behaviour' } });
  };
}

const BEHAVIOURS = ['ok', 'other', 'fail500', 'rate', 'bad400', 'badkey', 'err200', 'empty', 'cutfirst', 'cutmid', 'slow'];

eachDatabase('relay: channel selection, failover, limits (GR01)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  const closedSockets: string[] = [];

  before(async () => {
    const routes: Record<string, (r: Seen, res: http.ServerResponse) => void> = {};
    for (const b of BEHAVIOURS) routes[`POST /${b}/v1/chat/completions`] = behaviour(b);
    routes['POST /slow/v1/chat/completions'] = (r, res) => {
      res.on('close', () => closedSockets.push('slow'));
      behaviour('slow')(r, res);
    };
    up = await startFakeUpstream(routes);
    s = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_AUTO_DISABLE_CHANNEL: 'true', GATEWAY_RELAY_ROUTE_CACHE_MS: '0' } });
    root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent(PRICES);
  });
  after(async () => {
    const all = s.everything();
    assert.ok(!all.includes(KEY), 'an upstream key leaked into an answer or a log line');
    await s.close();
    await up.close();
  });

  let models = 0;
  /** A fresh model name per test, so each test sees only its own channels. */
  async function freshModel() {
    const model = `m${++models}-${Date.now()}`;
    PRICES.model_ratio[model as 'gpt-4o'] = 1;
    await s.services.ratios.setCurrent(PRICES);
    return model;
  }
  beforeEach(async () => {
    await s.services.ratios.setCurrent(PRICES);
    up.seen.length = 0;
  });

  async function channel(b: string, model: string, fields: Record<string, unknown> = {}) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: b, base_url: `${up.url}/${b}`, models: model, key: KEY, group: 'default,vip', ...fields } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const hits = (b: string) => up.seen.filter((x) => x.path.startsWith(`/${b}/`)).length;
  const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

  test('a chat call is served by a channel: the upstream answer, its usage and the cost from the ratios', async () => {
    const id = await channel('ok', 'gpt-4o');
    const r = await relay(s.url, '/chat/completions', chat('gpt-4o'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, 'served by ok (abcdef)');
    assert.equal(r.summary.channel_id, id);
    assert.deepEqual(r.summary.usage, { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 40, reasoning_tokens: 0, total_tokens: 120, counted: false });
    // (60 uncached + 40 × 0.5 cached + 20 × 4 completion) × 1.25 = 200 quota = $0.0004
    assert.equal(r.summary.quota, 200);
    assert.equal(r.summary.cost_usd, 0.0004);
    const sent = up.seen.at(-1)!;
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    assert.equal(sent.json.model, 'gpt-4o');
    // The group's ratio applies; a fixed price is per call.
    assert.equal((await relay(s.url, '/chat/completions', chat('gpt-4o'), { group: 'vip' })).summary.quota, 100);
    await channel('ok', 'per-call');
    assert.equal((await relay(s.url, '/chat/completions', chat('per-call'))).summary.quota, 10_000);
  });

  test('streamed: the caller gets the chunks, [DONE] and the summary; the usage chunk only when asked', async () => {
    const model = await freshModel();
    await channel('ok', model);
    const r = await relay(s.url, '/chat/completions', chat(model, { stream: true }));
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /text\/event-stream/);
    assert.equal(streamedText(r.events), 'hello');
    assert.equal(r.events.at(-1), '[DONE]');
    assert.ok(!r.events.some((e) => e?.usage), 'no usage chunk unless stream_options.include_usage');
    assert.equal(up.seen.at(-1)!.json.stream_options.include_usage, true, 'the relay always asks the upstream for usage');
    assert.equal(r.summary.usage.prompt_tokens, 10);
    assert.equal(r.summary.status, 200);
    assert.equal(typeof r.summary.first_byte_ms, 'number');
    const withUsage = await relay(s.url, '/chat/completions', chat(model, { stream: true, stream_options: { include_usage: true } }));
    assert.equal(withUsage.events.filter((e) => e?.usage).length, 1);
  });

  test('failover: a 5xx, a 429, an error in a 200 body, an empty or cut stream move to the next channel', async () => {
    for (const b of ['fail500', 'rate', 'err200']) {
      const model = await freshModel();
      const bad = await channel(b, model, { priority: 10 });
      const good = await channel('ok', model, { priority: 0 });
      const r = await relay(s.url, '/chat/completions', chat(model));
      assert.equal(r.status, 200, `${b}: ${r.text}`);
      assert.deepEqual(r.summary.attempts.map((a: any) => [a.channel_id, a.error_code === null]), [[bad, false], [good, true]], b);
    }
    for (const b of ['empty', 'cutfirst']) {
      const model = await freshModel();
      await channel(b, model, { priority: 10 });
      await channel('ok', model, { priority: 0 });
      const r = await relay(s.url, '/chat/completions', chat(model, { stream: true }));
      assert.equal(streamedText(r.events), 'hello', b);
      assert.equal(r.summary.attempts.length, 2, b);
    }
  });

  test('retries stop at GATEWAY_RETRY_TIMES (2): three channels tried, each once, then the last error', async () => {
    const model = await freshModel();
    for (let i = 0; i < 5; i++) await channel('fail500', model);
    const r = await relay(s.url, '/chat/completions', chat(model));
    assert.equal(r.status, 500);
    assert.equal(r.json.error.code, 'relay_upstream_error');
    // The caller is told what happened; the upstream's own words are for staff, in the relay log.
    assert.equal(r.json.error.message, 'The upstream answered HTTP 500: the upstream could not serve the call; try again later');
    assert.equal(hits('fail500'), 3);
    await s.relay.log.flush();
    const logged = await s.ctx.db.selectFrom('relay_log').selectAll().where('model', '=', model).executeTakeFirstOrThrow();
    assert.equal(logged.error_detail, 'relay_upstream_error (HTTP 500): upstream exploded');
    const tried = JSON.parse(logged.attempts).map((a: any) => a.channel_id);
    assert.equal(new Set(tried).size, 3, 'no channel tried twice');
    assert.equal(logged.retries, 2);
    assert.equal(logged.error_code, 'relay_upstream_error');
  });

  test('a 400 from the upstream is not retried and keeps its status; status_code_mapping changes what the caller sees', async () => {
    const model = await freshModel();
    await channel('bad400', model, { priority: 5 });
    await channel('ok', model);
    const r = await relay(s.url, '/chat/completions', chat(model));
    assert.equal(r.status, 400);
    assert.equal(hits('ok'), 0);
    const mapped = await freshModel();
    await channel('bad400', mapped, { status_code_mapping: '{"400":"422"}' });
    assert.equal((await relay(s.url, '/chat/completions', chat(mapped))).status, 422);
  });

  test('no retry once output began: a stream cut mid-way ends with an error event, the other channel untouched', async () => {
    const model = await freshModel();
    await channel('cutmid', model, { priority: 10 });
    await channel('ok', model);
    const r = await relay(s.url, '/chat/completions', chat(model, { stream: true }));
    assert.equal(r.status, 200);
    assert.equal(streamedText(r.events), 'partial ');
    assert.equal(r.events.at(-1).error.code, 'relay_stream_interrupted');
    assert.equal(hits('ok'), 0);
    assert.equal(r.summary.status, 502);
  });

  test('priority tiers come first; inside a tier the weights share the calls', async () => {
    const model = await freshModel();
    await channel('other', model, { priority: 1, weight: 1 });
    await channel('ok', model, { priority: 1, weight: 3 });
    await channel('fail500', model, { priority: 0, weight: 100 });
    const n = 400;
    for (let i = 0; i < n; i++) assert.equal((await relay(s.url, '/chat/completions', chat(model))).status, 200);
    assert.equal(hits('fail500'), 0, 'the lower tier is never chosen while the upper one answers');
    const share = hits('ok') / n;
    // Expected 0.75; with 400 draws the standard deviation is 0.022: these bounds are ±4.5 of it.
    assert.ok(share > 0.65 && share < 0.85, `weight 3 of 4 got ${share}`);
  });

  test('a bad key disables its channel (auto_ban) and later calls skip it', async () => {
    const model = await freshModel();
    const bad = await channel('badkey', model, { priority: 10, auto_ban: 1 });
    await channel('ok', model);
    const r = await relay(s.url, '/chat/completions', chat(model));
    assert.equal(r.status, 200);
    const row = await s.ctx.db.selectFrom('channels').select(['status', 'other_info']).where('id', '=', bad).executeTakeFirstOrThrow();
    assert.equal(row.status, 3);
    assert.match(row.other_info, /invalid_api_key/);
    up.seen.length = 0;
    await relay(s.url, '/chat/completions', chat(model));
    assert.equal(hits('badkey'), 0);
  });

  test('multi-key polling uses the enabled keys in turn', async () => {
    const model = await freshModel();
    const keys = ['sk-poll-aaaaaa-111111', 'sk-poll-bbbbbb-222222', 'sk-poll-cccccc-333333'];
    const r = await root.post('/api/channel/', { mode: 'multi_to_single', multi_key_mode: 'polling', channel: { type: 1, name: 'multi', base_url: `${up.url}/ok`, models: model, key: keys.join('\n') } });
    assert.equal(r.status, 200, r.text);
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) seen.push((await relay(s.url, '/chat/completions', chat(model))).json.choices[0].message.content.slice(-7, -1));
    assert.deepEqual(seen.slice(0, 3).sort(), ['111111', '222222', '333333']);
    assert.deepEqual(seen.slice(3), seen.slice(0, 3));
  });

  test('model mapping, parameter and header overrides reach the upstream', async () => {
    const model = await freshModel();
    await channel('ok', model, { model_mapping: JSON.stringify({ [model]: 'upstream-name' }), param_override: '{"temperature":0.1}', header_override: '{"x-team":"blue"}' });
    const r = await relay(s.url, '/chat/completions', chat(model));
    assert.equal(r.status, 200);
    const sent = up.seen.at(-1)!;
    assert.equal(sent.json.model, 'upstream-name');
    assert.equal(sent.json.temperature, 0.1);
    assert.equal(sent.headers['x-team'], 'blue');
    assert.equal(r.summary.upstream_model, 'upstream-name');
    assert.equal(r.summary.model, model);
  });

  test('a model without a price or without a channel is refused before any upstream call', async () => {
    await channel('ok', 'unpriced-model');
    const r = await relay(s.url, '/chat/completions', chat('unpriced-model'));
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'relay_model_unpriced');
    const none = await relay(s.url, '/chat/completions', chat(await freshModel()));
    assert.equal(none.json.error.code, 'relay_no_channel');
    assert.equal(hits('ok'), 0);
    const bad = await relay(s.url, '/chat/completions', { model: 'gpt-4o' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'relay_invalid_request');
    const notJson = await relay(s.url, '/chat/completions', '{"model":');
    assert.equal(notJson.status, 400);
    assert.ok(notJson.json.error, 'the OpenAI error shape');
  });

  test('the caller going away aborts the upstream request', async () => {
    const model = await freshModel();
    await channel('slow', model);
    const gone = new AbortController();
    const res = await fetch(`${s.url}/relay/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${await relayToken()}`, 'content-type': 'application/json' }, body: JSON.stringify(chat(model, { stream: true })), signal: gone.signal });
    const reader = res.body!.getReader();
    await reader.read();
    gone.abort();
    for (let i = 0; i < 50 && !closedSockets.length; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(closedSockets, ['slow']);
    await s.relay.log.flush();
    const row = await s.ctx.db.selectFrom('relay_log').selectAll().where('model', '=', model).executeTakeFirstOrThrow();
    assert.equal(row.status, 499);
    assert.ok(row.completion_tokens > 0, 'what was streamed is counted');
  });

  test('the relay log is readable by staff with filters (GS04) and summed per bucket (GS05)', async () => {
    await s.relay.log.flush();
    const page = await root.get('/api/relay/log?model=gpt-4o&page_size=2');
    assert.equal(page.status, 200, page.text);
    assert.equal(page.json.data.items.length, 2);
    assert.ok(page.json.data.total >= 2);
    assert.equal(page.json.data.items[0].model, 'gpt-4o');
    assert.ok(Array.isArray(page.json.data.items[0].attempts));
    const errors = await root.get('/api/relay/log?status=error');
    assert.ok(errors.json.data.items.every((i: any) => i.error_code !== null));
    const usage = await root.get(`/api/relay/usage?start_time=${Date.now() - 3600_000}&bucket_seconds=3600`);
    assert.equal(usage.status, 200, usage.text);
    assert.ok(usage.json.data.buckets.some((b: any) => b.key === 'gpt-4o' && b.calls === 2 && b.quota === 300), JSON.stringify(usage.json.data));
    // By caller: what each edge owner (the workload token's iss:sub) spent.
    const byCaller = await root.get(`/api/relay/usage?start_time=${Date.now() - 3600_000}&bucket_seconds=3600&by=caller`);
    assert.equal(byCaller.status, 200, byCaller.text);
    assert.deepEqual(byCaller.json.data.buckets.map((b: any) => b.key), ['edge:acme']);
    assert.deepEqual(byCaller.json.data.caller_names, {}, 'no names without the edge in this process');
    assert.equal(byCaller.json.data.buckets[0].calls, usage.json.data.buckets.reduce((n: number, b: any) => n + b.calls, 0));
    const used = await s.ctx.db.selectFrom('channels').select((e) => e.fn.sum<number>('used_quota').as('q')).executeTakeFirstOrThrow();
    assert.ok(Number(used.q) > 0, 'served calls add to the channels\' used quota');
    assert.equal((await s.anonymous().get('/api/relay/log')).status, 401);
  });
});
