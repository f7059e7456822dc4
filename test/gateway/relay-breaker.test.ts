import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';

const KEY = 'sk-breaker-KEY-0123456789abcdef';
const answer = (res: http.ServerResponse, text: string) =>
  sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

eachDatabase('relay circuit breakers, Retry-After and budgets', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  /** What each path prefix answers; tests switch a channel between healthy and failing. */
  const mode: Record<string, 'ok' | 'fail' | 'slow' | 'rate'> = {};
  let n = 0;

  before(async () => {
    up = await startFakeUpstream();
    const handler = (r: Seen, res: http.ServerResponse) => {
      const name = r.path.split('/')[1]!;
      const key = String(r.headers.authorization ?? '').slice(7);
      if (key.endsWith('-bad')) return sendJson(res, 401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } });
      // A call still in flight when its channel opens or pauses: it fails later.
      if (name !== 'ok' && r.json?.messages?.[0]?.content === 'fail late') return void setTimeout(() => sendJson(res, 500, { error: { message: 'late boom' } }), 400);
      const m = mode[name] ?? 'ok';
      if (m === 'fail') return sendJson(res, 500, { error: { message: 'boom' } });
      if (m === 'rate') {
        res.setHeader('retry-after', '1');
        return sendJson(res, 429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } });
      }
      if (m === 'slow') return void setTimeout(() => answer(res, name), 600);
      answer(res, name);
    };
    // Any path: the fake routes by exact path, so route every channel's chat path to one handler.
    up.routes['*'] = handler;
    for (const name of ['flaky', 'ok', 'off', 'paused', 'multi', 'budget', 'sticky', 'other', 'a', 'b', 'c']) up.routes[`POST /${name}/v1/chat/completions`] = handler;
    s = await startGateway(v, {
      env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0', GATEWAY_BREAKER_FAILURES: '3', GATEWAY_BREAKER_COOLDOWN_SECONDS: '1', GATEWAY_BREAKER_PROBES: '1', GATEWAY_RELAY_BACKOFF_MS: '0', GATEWAY_RETRY_TIMES: '5' },
    });
    root = await s.staff('root', 'root');
  });
  after(async () => {
    await s.relay.breaker.settled();
    assert.ok(!s.everything().includes(KEY), 'a key leaked');
    await s.close();
    await up.close();
  });

  async function model() {
    const m = `bm${++n}-${v.name}`;
    await s.services.ratios.setCurrent({ model_ratio: Object.fromEntries(Array.from({ length: n }, (_, i) => [`bm${i + 1}-${v.name}`, 1])) });
    return m;
  }
  async function channel(name: string, m: string, fields: Record<string, unknown> = {}) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: m, key: KEY, ...fields } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const hits = (name: string) => up.seen.filter((x) => x.path.startsWith(`/${name}/`)).length;
  const call = (m: string) => relay(s.url, '/chat/completions', { model: m, messages: [{ role: 'user', content: 'hi' }] });
  const statusOf = async (id: number) => (await s.ctx.db.selectFrom('channels').select(['status', 'other_info']).where('id', '=', id).executeTakeFirstOrThrow());

  test('N failures open the breaker; during the cooldown the channel gets nothing; a failed probe reopens it longer; a good probe closes it', async () => {
    const m = await model();
    mode.flaky = 'fail';
    const flaky = await channel('flaky', m, { priority: 10 });
    await channel('ok', m);
    for (let i = 0; i < 3; i++) assert.equal((await call(m)).json.choices[0].message.content, 'ok');
    // The third failure sends the channel test's request; its failure opens the breaker (issue 29).
    await s.relay.breaker.settled();
    assert.equal(hits('flaky'), 4, 'the canned probe');
    const opened = await statusOf(flaky);
    assert.equal(opened.status, 3);
    assert.match(opened.other_info, /breaker: 3 failures within 60 s.*the channel test failed too/);
    const before = hits('flaky');
    for (let i = 0; i < 5; i++) await call(m);
    assert.equal(hits('flaky'), before, 'open: no request reaches it');
    await sleep(1100);
    await call(m); // the half-open request fails, and the canned probe too: open again, for 2 s now
    await s.relay.breaker.settled();
    assert.equal(hits('flaky'), before + 2, 'half-open: one request, then the canned probe');
    await sleep(1100);
    await call(m);
    assert.equal(hits('flaky'), before + 2, 'the second cooldown is longer');
    mode.flaky = 'ok';
    await sleep(1000);
    assert.equal((await call(m)).json.choices[0].message.content, 'flaky', 'the probe is served by the recovered channel');
    // The breaker is closed right after the answer went out.
    for (let i = 0; i < 50 && (await statusOf(flaky)).status !== 1; i++) await sleep(20);
    assert.equal((await statusOf(flaky)).status, 1, 'closed again');
    assert.match((await statusOf(flaky)).other_info, /a probe succeeded/);
  });

  test('failures of calls in flight when the breaker opened or Retry-After paused the channel send it no canned probe', async () => {
    const m = await model();
    const late = (model: string) => () => relay(s.url, '/chat/completions', { model, messages: [{ role: 'user', content: 'fail late' }] });
    mode.b = 'fail';
    const b = await channel('b', m, { priority: 10 });
    await channel('ok', m);
    // Three calls reach b and fail only after three others have opened it (the third's canned probe failed too).
    let inFlight = Promise.all(Array.from({ length: 3 }, late(m)));
    await sleep(100);
    for (let i = 0; i < 3; i++) await call(m);
    await s.relay.breaker.settled();
    assert.equal((await statusOf(b)).status, 3);
    let before = hits('b');
    assert.ok((await inFlight).every((r) => r.status === 200));
    await s.relay.breaker.settled();
    assert.equal(hits('b'), before, 'open: the late failures sent nothing to it');

    const m2 = await model();
    const c = await channel('c', m2, { priority: 10 });
    await channel('ok', m2);
    inFlight = Promise.all(Array.from({ length: 3 }, late(m2)));
    await sleep(100);
    mode.c = 'rate';
    await call(m2);
    before = hits('c');
    assert.ok((await inFlight).every((r) => r.status === 200));
    await s.relay.breaker.settled();
    assert.equal(hits('c'), before, 'paused by Retry-After: the late failures sent nothing to it');
    assert.equal((await statusOf(c)).status, 1);
  });

  test('half-open lets at most one probe through at a time; a manually disabled channel is never probed', async () => {
    const m = await model();
    mode.a = 'fail';
    const a = await channel('a', m, { priority: 10 });
    const off = await channel('off', m, { priority: 20 });
    await channel('ok', m);
    assert.equal((await root.post(`/api/channel/${off}/status`, { status: 2 })).status, 200);
    for (let i = 0; i < 3; i++) await call(m);
    await s.relay.breaker.settled();
    assert.equal((await statusOf(a)).status, 3);
    mode.a = 'slow';
    await sleep(1100);
    const before = hits('a');
    const results = await Promise.all(Array.from({ length: 6 }, () => call(m)));
    assert.ok(results.every((r) => r.status === 200));
    assert.equal(hits('a') - before, 1, 'one probe while it is in flight');
    assert.equal(hits('off'), 0, 'the manually disabled channel received nothing');
  });

  test('Retry-After keeps a channel out of use until then, without disabling it', async () => {
    const m = await model();
    mode.paused = 'rate';
    const paused = await channel('paused', m, { priority: 10 });
    await channel('ok', m);
    await call(m);
    mode.paused = 'ok';
    const before = hits('paused');
    await call(m);
    assert.equal(hits('paused'), before, 'paused');
    assert.equal((await statusOf(paused)).status, 1, 'not disabled');
    await sleep(1100);
    assert.equal((await call(m)).json.choices[0].message.content, 'paused');
  });

  test('no request tries a channel twice; a multi-key channel loses only its bad key and serves from another key', async () => {
    const m = await model();
    mode.b = 'fail';
    mode.c = 'fail';
    await channel('b', m, { priority: 5 });
    await channel('c', m, { priority: 5 });
    const r = await call(m);
    assert.equal(r.status, 500);
    const tried = r.json ? (await s.relay.log.flush(), await s.ctx.db.selectFrom('relay_log').select('attempts').where('model', '=', m).executeTakeFirstOrThrow()) : null;
    const ids = JSON.parse(tried!.attempts).map((a: any) => a.channel_id);
    assert.equal(ids.length, new Set(ids).size);
    const mk = await model();
    const created = await root.post('/api/channel/', { mode: 'multi_to_single', multi_key_mode: 'polling', channel: { type: 1, name: 'multi', base_url: `${up.url}/multi`, models: mk, key: [`${KEY}-1`, `${KEY}-bad`, `${KEY}-3`].join('\n') } });
    const id = created.json.data.ids[0];
    for (let i = 0; i < 9; i++) assert.equal((await call(mk)).status, 200);
    await s.relay.breaker.settled();
    const row = await s.ctx.db.selectFrom('channels').select(['status', 'channel_info']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.status, 1, 'the channel stays enabled');
    assert.equal(JSON.parse(row.channel_info).multi_key_status_list['1'], 3, 'its bad key is open');
  });

  test('metrics: relayed calls, tokens, cost, attempts and breaker transitions', async () => {
    const text = await (await fetch(`${s.url}/metrics`, s.ctx.config.opsToken ? { headers: { authorization: `Bearer ${s.ctx.config.opsToken}` } } : {})).text();
    assert.match(text, /relay_calls_total\{[^}]*outcome="ok"[^}]*\} [1-9]/);
    assert.match(text, /relay_tokens_total\{[^}]*kind="prompt"[^}]*\} [1-9]/);
    assert.match(text, /relay_cost_quota_total\{[^}]*\} [1-9]/);
    assert.match(text, /relay_upstream_attempts_total\{[^}]*outcome="relay_upstream_error"[^}]*\} [1-9]/);
    assert.match(text, /relay_breaker_transitions_total\{[^}]*to="open"[^}]*\} [1-9]/);
    assert.match(text, /relay_breaker_transitions_total\{[^}]*to="closed"[^}]*\} [1-9]/);
    assert.match(text, /relay_latency_seconds_bucket\{[^}]*phase="total"/);
  });

  test('a channel that spent its budget (settings.quota_limit) is disabled by hand-only status with the reason', async () => {
    const m = await model();
    const id = await channel('budget', m, { priority: 10, settings: JSON.stringify({ quota_limit: 30 }) });
    await channel('ok', m);
    // Each call costs 20 (10 + 10 tokens × ratio 1): the second one passes the limit.
    assert.equal((await call(m)).json.choices[0].message.content, 'budget');
    assert.equal((await call(m)).json.choices[0].message.content, 'budget');
    assert.equal((await call(m)).json.choices[0].message.content, 'ok');
    const row = await statusOf(id);
    assert.equal(row.status, 2);
    assert.match(row.other_info, /quota limit 30 reached/);
  });
});
