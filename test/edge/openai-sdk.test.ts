import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { eachDatabase } from '../helpers/services.js';
import { CHAT_COST, startStack, syncRunsSettled, UPSTREAM_KEY, walletOf, type Stack } from '../helpers/stack.js';

eachDatabase('edge: unchanged OpenAI SDKs against the edge, billed through the gateway relay', (v) => {
  let st: Stack;
  let client: OpenAI;
  let poorClient: OpenAI;
  const START = 100_000;

  before(async () => {
    // PostgreSQL: the edge reaches the gateway over its internal API (two processes' way); SQLite: in process.
    st = await startStack(v, { http: v.name !== 'sqlite' });
    for (const [id, reserve] of [['gpt-4o', 500], ['text-embedding-3-small', 50], ['broken-model', 100], ['slow-model', 100]] as const) {
      assert.equal((await st.edge.cli('edge', 'model', 'set', id, '--reserve', String(reserve))).error, null);
    }
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'gpt-4o-alias', '--reserve', '500', '--gateway-model', 'gpt-4o')).error, null);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', String(START))).error, null);
    assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'poor', '--amount', '10')).error, null);
    client = new OpenAI({ baseURL: `${st.edge.url}/v1`, apiKey: await st.edge.issueKey('acme'), maxRetries: 0 });
    poorClient = new OpenAI({ baseURL: `${st.edge.url}/v1`, apiKey: await st.edge.issueKey('poor'), maxRetries: 0 });
  });
  after(async () => {
    assert.ok(!st.edge.everything().includes(UPSTREAM_KEY) && !st.gateway.everything().includes(UPSTREAM_KEY), 'the upstream key left the gateway');
    await st.close();
  });

  test('chat completions: the SDK gets the answer; the wallet is charged exactly the relay\'s cost once', async () => {
    const before = await walletOf(st, 'acme');
    const c = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(c.choices[0]!.message.content, 'Hello there');
    assert.equal(c.usage?.total_tokens, 120);
    await syncRunsSettled(st);
    assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - CHAT_COST, reserved: 0 });
    const run = await st.edge.ctx.db.selectFrom('edge_runs').selectAll().where('kind', '=', 'sync').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    assert.equal(run.status, 'succeeded');
    assert.equal(Number(run.cost), CHAT_COST);
    const settlements = await st.edge.ctx.db.selectFrom('edge_settlements').selectAll().where('run_id', '=', run.run_id).execute();
    assert.equal(settlements.length, 1);
    const events = await st.edge.ctx.db.selectFrom('edge_outbox').select(['type', 'payload']).where('payload', 'like', `%${run.run_id}%`).orderBy('sequence').execute();
    assert.deepEqual(events.map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0', 'run.completed@1', 'wallet.settled@1', 'billing.finalization-reconciliation-resolution.applied@1']);
    assert.equal(JSON.parse(events[3]!.payload).charged, CHAT_COST);
  });

  test('a chat answer has our own request id (not the client\'s), which names its run and its request log line; no-store; any origin', async () => {
    const r = await fetch(`${st.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'chosen-by-client', origin: 'https://app.example' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { object: string }).object, 'chat.completion');
    const id = r.headers.get('x-request-id')!;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
    await syncRunsSettled(st);
    const run = await st.edge.ctx.db.selectFrom('edge_runs').select('status').where('request_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(run.status, 'succeeded');
    const logged = st.edge.everything().split('\n').find((l) => l.includes(`"reqId":"${id}"`) && l.includes('"msg":"request"'));
    assert.match(logged ?? '', /"route":"\/v1\/chat\/completions".*"status":200/);
  });

  test('streamed chat: the SDK iterates the chunks; the run is settled after the last one', async () => {
    const before = await walletOf(st, 'acme');
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage = 0;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage.total_tokens;
    }
    assert.equal(text, 'Hello there');
    assert.equal(usage, 120);
    await syncRunsSettled(st);
    assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - CHAT_COST, reserved: 0 });
  });

  test('Responses (OpenAI body on POST /v1/responses), embeddings and the model list work unchanged', async () => {
    const r = await client.responses.create({ model: 'gpt-4o', input: 'ping' });
    assert.equal(r.output_text, 'echo: ping');
    const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'float' });
    assert.deepEqual(e.data[0]!.embedding, [0.25, -0.5]);
    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    assert.deepEqual(models.sort(), ['broken-model', 'gpt-4o', 'gpt-4o-alias', 'slow-model', 'text-embedding-3-small']);
    const alias = await client.chat.completions.create({ model: 'gpt-4o-alias', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(alias.choices[0]!.message.content, 'Hello there');
    assert.equal(st.up.seen.at(-1)!.json.model, 'gpt-4o', 'the public id is served as its gateway model');
  });

  test('one model (GET /v1/models/{id}): the model object; 404 in OpenAI\'s shape when unknown, disabled or outside the token\'s model limits', async () => {
    const m = await client.models.retrieve('gpt-4o');
    assert.deepEqual([m.id, m.object, m.owned_by, typeof m.created], ['gpt-4o', 'model', 'system', 'number']);
    const missing = await client.models.retrieve('no-such-model').catch((e) => e);
    assert.ok(missing instanceof OpenAI.NotFoundError);
    assert.deepEqual([missing.code, missing.param, missing.type], ['model_not_found', 'model', 'invalid_request_error']);
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'slow-model', '--reserve', '100', '--disabled')).error, null);
    assert.equal((await client.models.retrieve('slow-model').catch((e) => e)).status, 404);
    assert.equal((await st.edge.cli('edge', 'model', 'set', 'slow-model', '--reserve', '100')).error, null);
    const port = st.edge.services.customers;
    await port.grant(7, 1000, 'signup:7', 'system:test', '');
    const limited = await port.createToken(7, { name: 'one', expired_time: -1, remain_quota: 1000, unlimited_quota: false, model_limits_enabled: true, model_limits: 'gpt-4o', allow_ips: '', group: '' });
    const user = new OpenAI({ baseURL: `${st.edge.url}/v1`, apiKey: limited.key, maxRetries: 0 });
    assert.equal((await user.models.retrieve('gpt-4o')).id, 'gpt-4o');
    assert.equal((await user.models.retrieve('text-embedding-3-small').catch((e) => e)).status, 404, 'a model the token may not call is not shown');
  });

  test('errors reach the SDK as OpenAI errors: balance, unknown model, upstream failure (reservation released)', async () => {
    await assert.rejects(poorClient.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }), (e: any) => e.status === 402 && e.code === 'insufficient_balance');
    await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }), (e: any) => e.status === 404 && e.code === 'model_not_found');
    const before = await walletOf(st, 'acme');
    await assert.rejects(client.chat.completions.create({ model: 'broken-model', messages: [{ role: 'user', content: 'hi' }] }), (e: any) => e.status === 500 && e.code === 'relay_upstream_error' && typeof e.requestID === 'string');
    await syncRunsSettled(st);
    assert.deepEqual(await walletOf(st, 'acme'), before, 'a failed call costs nothing and holds nothing');
    assert.equal((await poorClient.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e)).error?.type, 'insufficient_quota');
  });
});
