import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, hugeBody, sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { assertAbilitiesConsistent } from './consistency.js';

const GOOD = 'sk-test-GOOD-0123456789abcdef';
const BAD = 'sk-test-BAD-0123456789abcdefgh';
const ANT = 'sk-ant-test-0123456789abcdef';
const CODEX = JSON.stringify({ access_token: 'codex-access-token-0123456789', refresh_token: 'codex-refresh-0123456789', account_id: 'acct-1' });

/** OpenAI-style answers chosen by the model name; a bad key gets 401 with the key echoed (as OpenAI does). */
function openai(kind: 'chat' | 'responses' | 'embeddings') {
  return (r: Seen, res: http.ServerResponse): void => {
    const key = String(r.headers.authorization ?? r.headers['api-key'] ?? '').replace(/^Bearer /, '');
    if (key.startsWith(BAD)) return sendJson(res, 401, { error: { message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error', code: 'invalid_api_key' } });
    const model = String(r.json?.model ?? '');
    if (model === 'rate') return sendJson(res, 429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } });
    if (model === 'broken') return sendJson(res, 500, { error: { message: 'upstream exploded' } });
    if (model === 'err-in-200') return sendJson(res, 200, { error: { message: 'model overloaded', type: 'server_error' } });
    if (model === 'cut') return sendSse(res, [], { cut: true });
    if (model === 'huge') return void hugeBody(4 * 1024 * 1024)(r, res);
    if (model === 'spoof') return sendJson(res, 400, { error: { message: 'nope', code: 'channel:no_available_key' } });
    if (model === 'quota') return sendJson(res, 400, { error: { message: 'You exceeded your current quota, please check your plan', type: 'insufficient_quota' } });
    if (r.json?.stream) return sendSse(res, [{ id: 'c1', choices: [{ delta: { content: 'hello' } }] }, { id: 'c1', choices: [], usage: { total_tokens: 3 } }]);
    if (kind === 'embeddings') return sendJson(res, 200, { object: 'list', data: [{ embedding: [0.1, 0.2] }] });
    if (kind === 'responses') return sendJson(res, 200, { id: 'resp_1', object: 'response', output: [] });
    sendJson(res, 200, { id: 'c1', object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'hello' } }] });
  };
}

eachDatabase('gateway channel tests (G33, G34)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let other: GatewayServer;
  let off: GatewayServer;
  let closed: GatewayServer;
  let root: StaffClient;
  let ops: StaffClient;

  before(async () => {
    up = await startFakeUpstream({
      'POST /v1/chat/completions': openai('chat'),
      'POST /slow/v1/chat/completions': later(1200, openai('chat')),
      'POST /slower/v1/chat/completions': later(5000, openai('chat')),
      'POST /v1/responses': openai('responses'),
      'POST /v1/embeddings': openai('embeddings'),
      'POST /openai/deployments/gpt-4o/chat/completions': openai('chat'),
      'POST /v1/messages': (r, res) => {
        if (r.headers['x-api-key'] !== ANT) return sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
        if (r.json?.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('event: message_start\ndata: {"type":"message_start","message":{"id":"m1"}}\n\n');
          res.write('event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"hi"}}\n\n');
          res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n');
          return;
        }
        sendJson(res, 200, { id: 'm1', type: 'message', content: [{ type: 'text', text: 'hello' }] });
      },
      'POST /v1beta/models/gemini-2.5-flash:generateContent': (r, res) =>
        r.headers['x-goog-api-key'] === GOOD ? sendJson(res, 200, { candidates: [{ content: { parts: [{ text: 'hi' }] } }] }) : sendJson(res, 403, { error: { code: 403, message: 'API key not valid', status: 'PERMISSION_DENIED' } }),
      'POST /v1beta/models/gemini-2.5-flash:streamGenerateContent': (_r, res) => sendSse(res, [{ candidates: [{ content: { parts: [{ text: 'hi' }] } }] }], { done: false }),
      'POST /backend-api/codex/responses': (r, res) =>
        r.headers.authorization === 'Bearer codex-access-token-0123456789' && r.headers['chatgpt-account-id'] === 'acct-1' && r.json?.stream === true
          ? sendSse(res, [{ type: 'response.created' }, { type: 'response.completed' }], { done: false })
          : sendJson(res, 401, { detail: 'unauthorized' }),
    });
    const env = { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0' };
    const rules = {
      GATEWAY_AUTO_DISABLE_CHANNEL: 'true',
      GATEWAY_AUTO_ENABLE_CHANNEL: 'true',
      GATEWAY_CHANNEL_TEST_CONCURRENCY: '3',
      GATEWAY_CHANNEL_DISABLE_THRESHOLD_SECONDS: '1',
      GATEWAY_UPSTREAM_TIMEOUT_MS: '3000',
      GATEWAY_UPSTREAM_MAX_BYTES: String(1024 * 1024),
    };
    s = await startGateway(v, { env: { ...env, ...rules } });
    other = await startGateway(v, { env: { ...env, ...rules }, shareWith: s });
    off = await startGateway(v, { env });
    closed = await startGateway(v);
    root = await s.staff('root', 'root');
    ops = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = [s, other, off, closed].map((g) => g.everything()).join('\n');
    for (const k of [GOOD, BAD, ANT, 'codex-access-token-0123456789', 'codex-refresh-0123456789']) assert.ok(!all.includes(k), `secret ${k.slice(0, 14)} leaked`);
    await other.close();
    await s.close();
    await off.close();
    await closed.close();
    await up.close();
  });

  async function channel(c: StaffClient, fields: Record<string, unknown>, mode = 'single') {
    const r = await c.post('/api/channel/', { mode, channel: { type: 1, name: 'c', base_url: up.url, models: 'gpt-4o-mini', key: GOOD, ...fields } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const row = (g: GatewayServer, id: number) => g.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const test34 = (id: number, q = '') => ops.get(`/api/channel/test/${id}${q}`);

  test('G34 succeeds on every family and endpoint type, streamed or not, and saves the response time', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{}, '', '/v1/chat/completions'],
      [{}, '?stream=true', '/v1/chat/completions'],
      [{}, '?endpoint_type=openai-response', '/v1/responses'],
      [{ models: 'text-embedding-3-small' }, '', '/v1/embeddings'],
      [{ type: 3, models: 'gpt-4o', other: '2024-10-21' }, '', '/openai/deployments/gpt-4o/chat/completions'],
      [{ type: 14, key: ANT, models: 'claude-sonnet-4' }, '', '/v1/messages'],
      [{ type: 14, key: ANT, models: 'claude-sonnet-4' }, '?stream=true', '/v1/messages'],
      [{ type: 24, models: 'gemini-2.5-flash' }, '', '/v1beta/models/gemini-2.5-flash:generateContent'],
      [{ type: 24, models: 'gemini-2.5-flash' }, '?stream=true', '/v1beta/models/gemini-2.5-flash:streamGenerateContent'],
      [{ type: 4, key: GOOD, models: 'llama3' }, '', '/v1/chat/completions'],
      [{ type: 57, key: CODEX, models: 'gpt-5-codex' }, '', '/backend-api/codex/responses'],
      [{ models: 'alias', model_mapping: JSON.stringify({ alias: 'gpt-4o-mini' }) }, '', '/v1/chat/completions'],
    ];
    for (const [fields, q, path] of cases) {
      const id = await channel(root, fields);
      const before = up.seen.length;
      const r = await test34(id, q);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.success, true, `${JSON.stringify(fields)}${q}: ${r.text}`);
      assert.equal(typeof r.json.time, 'number');
      assert.equal(up.seen.at(-1)!.path, path);
      assert.equal(up.seen.length, before + 1);
      const stored = await row(s, id);
      assert.ok(Number(stored.test_time) > 0 && Number(stored.response_time) >= 0);
    }
    const mapped = up.seen.at(-1)!;
    assert.equal(mapped.json.model, 'gpt-4o-mini', 'the mapped model name goes upstream');
    assert.equal(mapped.json.messages[0].content, 'hi');
    assert.equal(mapped.json.max_tokens, 16);
  });

  test('G34 failures answer success:false with the error code; the key never comes back; nothing is saved or disabled', async () => {
    const cases: [Record<string, unknown>, string, string, number | null][] = [
      [{ key: BAD }, '', 'invalid_api_key', 401],
      [{ models: 'rate' }, '', 'rate_limit_exceeded', 429],
      [{ models: 'broken' }, '', 'bad_response', 500],
      [{ models: 'err-in-200' }, '', 'server_error', 200],
      [{ models: 'cut' }, '?stream=true', 'do_request_failed', null],
      [{ models: 'huge' }, '', 'do_request_failed', null],
      [{ base_url: up.url + '/slower' }, '', 'do_request_failed', null],
      [{ base_url: 'http://127.0.0.1:1' }, '', 'do_request_failed', null],
      [{ models: 'spoof' }, '', 'bad_response', 400],
    ];
    for (const [fields, q, code, status] of cases) {
      const id = await channel(root, fields);
      const r = await test34(id, q);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.success, false, JSON.stringify(fields) + r.text);
      assert.equal(r.json.error_code, code, JSON.stringify(fields) + r.text);
      assert.equal(r.json.data.upstream_status, status, JSON.stringify(fields));
      const stored = await row(s, id);
      assert.equal(Number(stored.test_time), 0);
      assert.equal(Number(stored.status), 1, 'a manual test never disables');
    }
    const id = await channel(root, { key: BAD });
    const r = await test34(id);
    assert.match(r.json.message, /\[redacted\]/);
  });

  test('G34 bad input: unknown id, untestable type, endpoint type the family lacks, key_index', async () => {
    assert.equal((await test34(999999)).status, 404);
    assert.equal((await ops.get('/api/channel/test/abc')).status, 400);
    for (const type of [2, 41, 33]) {
      const r1 = await test34(await channel(root, { type, other: JSON.stringify({ default: 'us-central1' }) }));
      assert.equal(r1.status, 400, `type ${type}: ${r1.text}`);
      assert.equal(r1.json.code, 'UPSTREAM_NOT_SUPPORTED');
    }
    const oa = await channel(root, {});
    for (const q of ['?endpoint_type=anthropic', '?endpoint_type=nonsense']) {
      const r = await test34(oa, q);
      assert.equal(r.json.code, 'CHANNEL_TEST_ENDPOINT_UNSUPPORTED', r.text);
    }
    assert.equal((await test34(oa, '?stream=maybe')).status, 400);
    const mk = await channel(root, { key: `${BAD}\n${GOOD}` }, 'multi_to_single');
    assert.equal((await test34(mk, '?key_index=1')).json.success, true);
    assert.equal((await test34(mk, '?key_index=0')).json.error_code, 'invalid_api_key');
    assert.equal((await test34(mk, '?key_index=2')).json.code, 'CHANNEL_KEY_INDEX_OUT_OF_RANGE');
    const refused = await closed.staff('root', 'root');
    const cid = (await refused.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'x', base_url: up.url, models: 'm', key: GOOD } })).json.data.ids[0];
    const r = await refused.get(`/api/channel/test/${cid}`);
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'UPSTREAM_ADDRESS_REFUSED');
  });

  test('G33 tests all channels as one job across instances and applies the automatic rules per channel and per key', async () => {
    await s.ctx.db.deleteFrom('abilities').execute();
    await s.ctx.db.deleteFrom('channels').execute();
    const good = await channel(root, { name: 'good' });
    const bad = await channel(root, { name: 'bad', key: BAD });
    const badNoBan = await channel(root, { name: 'bad-no-ban', key: BAD, auto_ban: 0 });
    const recovered = await channel(root, { name: 'recovered' });
    await s.ctx.db.updateTable('channels').set({ status: 3 }).where('id', '=', recovered).execute();
    await s.ctx.db.updateTable('abilities').set({ enabled: 0 }).where('channel_id', '=', recovered).execute();
    const manual = await channel(root, { name: 'manual', base_url: up.url + '/never' });
    await root.post(`/api/channel/${manual}/status`, { status: 2 });
    const mixed = await channel(root, { name: 'mixed', key: `${GOOD}\n${BAD}` }, 'multi_to_single');
    const allBad = await channel(root, { name: 'all-bad', key: `${BAD}\n${BAD}x` }, 'multi_to_single');
    const slow = await channel(root, { name: 'slow', base_url: up.url + '/slow' });

    const start = await ops.get('/api/channel/test');
    assert.equal(start.status, 200, start.text);
    const taskId = start.json.data.task_id;
    assert.equal(start.json.data.type, 'channel_test');
    const again = await (await other.staff('ops2', 'admin')).get('/api/channel/test');
    assert.equal(again.status, 409, again.text);
    assert.equal(again.json.code, 'JOB_RUNNING');
    assert.equal(again.json.data.task_id, taskId);

    let job: any;
    for (let i = 0; i < 200; i++) {
      job = (await ops.get(`/api/system_task/${taskId}`)).json.data;
      if (job.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.progress.total, 7, 'every channel but the manually disabled one');
    assert.equal(job.progress.done, 7);
    assert.equal(up.to('/never/v1/chat/completions').length, 0, 'a manually disabled channel is not tested');
    const status = async (id: number) => Number((await row(s, id)).status);
    assert.equal(await status(good), 1);
    assert.equal(await status(bad), 3);
    assert.match(JSON.parse((await row(s, bad)).other_info).status_reason, /invalid_api_key/);
    assert.ok(!(await row(s, bad)).other_info.includes(BAD), 'the stored reason is scrubbed');
    assert.equal(await status(badNoBan), 1, 'auto_ban 0 is never disabled');
    assert.equal(await status(recovered), 1, 'a recovered channel is enabled again');
    assert.equal(await status(manual), 2);
    assert.equal(await status(slow), 3, 'over the response-time threshold');
    assert.match(JSON.parse((await row(s, slow)).other_info).status_reason, /channel:response_time_exceeded/);
    const mixedInfo = JSON.parse((await row(s, mixed)).channel_info);
    assert.equal(await status(mixed), 1);
    assert.deepEqual(mixedInfo.multi_key_status_list, { 1: 3 });
    assert.equal(await status(allBad), 3);
    assert.equal(JSON.parse((await row(s, allBad)).other_info).status_reason, 'All keys are disabled');
    assert.ok(Number((await row(s, good)).test_time) > 0);
    await assertAbilitiesConsistent(s);
    assert.equal(job.progress.disabled, 5, 'one per disabled channel or key: bad, slow, mixed key 1, both keys of all-bad');
    assert.equal(job.progress.enabled, 1);
    // Every failed channel is in the failures, auto-disabled ones included (marked disabled).
    const failed = job.result.failures.map((f: any) => `${f.channel_id}/${f.key_index ?? '-'}/${f.disabled ? 'disabled' : 'kept'}`).sort();
    const expected = [`${bad}/-/disabled`, `${badNoBan}/-/kept`, `${slow}/-/disabled`, `${mixed}/1/disabled`, `${allBad}/0/disabled`, `${allBad}/1/disabled`].sort();
    assert.deepEqual(failed, expected);
    assert.equal(job.result.failed, 4, 'bad, bad-no-ban, slow, all-bad');
  });

  test('G33 with the rules off changes no status; recovery mode only tests auto-disabled channels', async () => {
    const admin = await off.staff('root', 'root');
    const bad = (await admin.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'b', base_url: up.url, models: 'm', key: BAD } })).json.data.ids[0];
    const wait = async (c: StaffClient, task: string) => {
      for (let i = 0; i < 200; i++) {
        const j = (await c.get(`/api/system_task/${task}`)).json.data;
        if (j.status !== 'running') return j;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const j = await wait(admin, (await admin.get('/api/channel/test')).json.data.task_id);
    assert.equal(j.progress.failed, 1);
    assert.equal(Number((await row(off, bad)).status), 1);
    const r = await wait(admin, (await admin.get('/api/channel/test?mode=recovery')).json.data.task_id);
    assert.equal(r.progress.total, 0);
    assert.equal((await admin.get('/api/channel/test?mode=other')).status, 400);
  });
});
