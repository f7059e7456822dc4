import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, relayToken } from '../helpers/relay.js';

const KEY = 'sk-guard-KEY-0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nested = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n));
const answer = (res: http.ServerResponse, text: string) =>
  sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } });

/**
 * Issue 29, defects 1, 2 and 9: no caller can take a shared channel away from the others (a body the relay
 * cannot handle, failures of its own content), and the relay never sends OpenAI requests to a type it cannot speak.
 */
eachDatabase('relay guard: hostile bodies, callers\' own failures and unspeakable channel types never cost a shared channel', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  /** What each channel's path answers: healthy, a 500 to everything, or by the prompt (STALL: no first byte in time; BAD: 400). */
  const mode: Record<string, 'ok' | 'fail'> = {};
  let n = 0;

  before(async () => {
    up = await startFakeUpstream();
    const handler = (r: Seen, res: http.ServerResponse) => {
      const name = r.path.split('/')[1]!;
      if (mode[name] === 'fail') return sendJson(res, 500, { error: { message: 'boom' } });
      const prompt = JSON.stringify(r.json?.messages ?? '');
      if (prompt.includes('STALL')) return void setTimeout(() => answer(res, 'late'), 1500);
      if (prompt.includes('BAD')) return sendJson(res, 400, { error: { message: 'your prompt is refused', code: 'invalid_request_error' } });
      answer(res, name);
    };
    for (const name of ['deep', 'own', 'own2', 'shared', 'refuses', 'broken', 'spare', 'codex', 'vertex', 'speaks']) up.routes[`POST /${name}/v1/chat/completions`] = handler;
    s = await startGateway(v, {
      env: {
        ...RELAY_ENV,
        GATEWAY_RELAY_ROUTE_CACHE_MS: '0',
        GATEWAY_BREAKER_FAILURES: '3',
        GATEWAY_BREAKER_COOLDOWN_SECONDS: '30',
        GATEWAY_RELAY_BACKOFF_MS: '0',
        GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: '300',
        // Even an operator who counts 4xx: a request's own 400 never counts.
        GATEWAY_BREAKER_COUNTS: '4xx,5xx,timeout,unreachable,bad_response,stream',
      },
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
    const m = `gm${++n}-${v.name}`;
    await s.services.ratios.setCurrent({ model_ratio: Object.fromEntries(Array.from({ length: n }, (_, i) => [`gm${i + 1}-${v.name}`, 1])) });
    return m;
  }
  async function channel(name: string, m: string, fields: Record<string, unknown> = {}) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${name}`, models: m, key: KEY, ...fields } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const hits = (name: string) => up.seen.filter((x) => x.path.startsWith(`/${name}/`)).length;
  /** The channel test's canned request ("hi", max_tokens 16), as opposed to a caller's. */
  const cannedProbes = (name: string) => up.seen.filter((x) => x.path.startsWith(`/${name}/`) && x.json?.max_tokens === 16 && x.json?.messages?.[0]?.content === 'hi').length;
  const statusOf = async (id: number) => Number((await s.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status);
  const call = async (m: string, content: unknown, subject = 'owner-b') => relay(s.url, '/chat/completions', { model: m, messages: [{ role: 'user', content }] }, { token: await relayToken({ subject }) });

  test('a body nested 20 000 deep is refused with 400 before anything is relayed; the channel stays in use', async () => {
    const m = await model();
    const id = await channel('deep', m);
    // About 40 KB of text (sent as text: the client's own JSON.stringify would overflow on it).
    const arrays = `{"model":"${m}","messages":[{"role":"user","content":"hi","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}]}`;
    const objects = `{"model":"${m}","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}]}`;
    for (const body of [arrays, objects]) {
      for (let i = 0; i < 6; i++) {
        const r = await relay(s.url, '/chat/completions', body);
        assert.equal(r.status, 400, r.text);
        assert.equal(r.json.error.code, 'relay_request_too_deep');
        assert.match(r.json.error.message, /deeper than 128 levels/);
      }
    }
    assert.equal(hits('deep'), 0, 'the upstream was never contacted');
    assert.equal(await statusOf(id), 1);
    assert.equal((await call(m, 'hello')).json.choices[0].message.content, 'deep');
    // A body the listener would refuse, handed over in process (the edge's co-hosted relay), is refused too.
    await assert.rejects(s.relay.engine.relay({ format: 'chat', body: { model: m, messages: [{ role: 'user', content: 'hi', x: nested(5000) }] }, caller: { issuer: 'edge', subject: 'x', group: 'default' }, requestId: 'deep-1' } as never), (e: any) => e.code === 'relay_request_too_deep');
  });

  test('an exception of the relay\'s own is a 500 of that call, never an upstream failure: no breaker, no other channel', async () => {
    const m = await model();
    const first = await channel('own', m, { priority: 10 });
    await channel('own2', m);
    for (let i = 0; i < 6; i++) {
      // A BigInt cannot be serialised: the relay fails before any byte leaves for the upstream.
      const r = s.relay.engine.relay({ format: 'chat', body: { model: m, messages: [{ role: 'user', content: 'hi' }], seed: 1n }, caller: { issuer: 'edge', subject: 'x', group: 'default' }, requestId: `own-${v.name}-${i}` } as never);
      await assert.rejects(r, (e: any) => e.code === 'relay_internal_error' && e.options.data.status === 500 && !/BigInt/.test(JSON.stringify(e.options)));
    }
    assert.equal(hits('own') + hits('own2'), 0);
    await s.relay.breaker.settled();
    assert.equal(await statusOf(first), 1, 'not disabled');
    assert.equal((await call(m, 'hello')).json.choices[0].message.content, 'own');
    assert.ok(/internal error during a call/.test(s.log.text()), 'logged for staff');
  });

  test('one caller\'s stalling prompts never disable a shared channel: the canned probe passes; the other owner is served every call', async () => {
    const m = await model();
    const id = await channel('shared', m);
    const attacker = Array.from({ length: 10 }, () => call(m, 'STALL please', 'owner-a'));
    const other: Awaited<ReturnType<typeof call>>[] = [];
    for (let i = 0; i < 20; i++) other.push(await call(m, `question ${i}`));
    const failed = await Promise.all(attacker);
    assert.ok(failed.every((r) => r.status === 504), failed.map((r) => r.status).join());
    await s.relay.breaker.settled();
    for (let i = 0; i < 5; i++) other.push(await call(m, `later ${i}`));
    assert.deepEqual(other.map((r) => r.status), Array(25).fill(200));
    assert.equal(await statusOf(id), 1, 'still enabled');
    assert.ok(cannedProbes('shared') >= 1, 'the canned probe decided');
  });

  test('a request\'s own 400 never counts, even when the operator counts 4xx: no probe, no disable', async () => {
    const m = await model();
    const id = await channel('refuses', m);
    for (let i = 0; i < 10; i++) assert.equal((await call(m, 'BAD content', 'owner-a')).status, 400);
    await s.relay.breaker.settled();
    assert.equal(cannedProbes('refuses'), 0);
    assert.equal(await statusOf(id), 1);
    assert.equal((await call(m, 'fine')).status, 200);
  });

  test('a channel that is really broken still opens after N failures, confirmed by the canned probe', async () => {
    const m = await model();
    mode.broken = 'fail';
    const id = await channel('broken', m, { priority: 10 });
    await channel('spare', m);
    for (let i = 0; i < 3; i++) assert.equal((await call(m, 'hello', 'owner-a')).json.choices[0].message.content, 'spare');
    await s.relay.breaker.settled();
    assert.equal(await statusOf(id), 3);
    assert.equal(cannedProbes('broken'), 1);
    const row = await s.ctx.db.selectFrom('channels').select('other_info').where('id', '=', id).executeTakeFirstOrThrow();
    assert.match(row.other_info, /breaker: 3 failures within 60 s.*the channel test failed too/);
  });

  test('channel types the relay cannot speak (Codex, VertexAI) are skipped, never sent OpenAI requests; none left: relay_no_channel', async () => {
    const m = await model();
    await channel('codex', m, { type: 57, priority: 10, key: JSON.stringify({ access_token: `${KEY}-codex`, account_id: 'acct' }) });
    await channel('vertex', m, { type: 41, priority: 10, other: JSON.stringify({ default: 'us-central1' }), key: JSON.stringify({ type: 'service_account', private_key: `${KEY}-vertex` }) });
    const ok = await channel('speaks', m);
    for (let i = 0; i < 4; i++) assert.equal((await call(m, 'hello')).json.choices[0].message.content, 'speaks');
    assert.equal(hits('codex') + hits('vertex'), 0, 'nothing sent to them');
    assert.ok(s.log.text().split("\n").some((l) => /the relay does not speak its type/.test(l) && /"type":57/.test(l)));
    assert.equal((await root.post(`/api/channel/${ok}/status`, { status: 2 })).status, 200);
    const r = await call(m, 'hello');
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'relay_no_channel');
    assert.equal(hits('codex') + hits('vertex'), 0);
  });
});
