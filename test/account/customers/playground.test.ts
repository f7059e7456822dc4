import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser } from '../../helpers/http.js';
import { CHAT_COST, CHAT_USAGE } from '../../helpers/stack.js';
import { CUSTOMER_API_SECRET, eachPlacement, settled, startCustomerStack, type CustomerStack } from './stack.js';

const CREDIT = 100_000;
const MESSAGES = [{ role: 'user', content: 'hi' }];

// new-api's playground (AP49, POST /pg/chat/completions) on the account service, with the edge co-hosted
// (the customer port in process) and apart (ER02 over HTTP): the signed-in user's chat through the edge and
// a fake upstream, whole and streamed, billed to the unit under the temporary token playground-<group>; the
// refusals in OpenAI's shape.
eachPlacement('playground: /pg/chat/completions', (v, apart) => {
  let c: CustomerStack;
  let alice: { b: Browser; id: number };

  const balance = async (b: Browser) => (await b.get('/api/user/self')).json.data.quota as number;
  const consumeRows = async (b: Browser) => (await b.get('/api/log/self?type=2&page_size=100')).json.data.items as any[];
  const runs = async () => (await c.st.edge.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length;
  const credit = async (id: number, quota: number) => assert.equal((await c.root.request('PUT', '/api/user/', { body: { id, quota, reason: 'test credit' } })).json.success, true);
  const pg = (b: Browser, body: unknown, headers?: Record<string, string>) => b.request('POST', '/pg/chat/completions', { body, headers });

  before(async () => {
    c = await startCustomerStack(v, { apart });
    alice = await c.customer('alice');
    await credit(alice.id, CREDIT);
  });
  after(async () => {
    const all = c.everything();
    assert.ok(!all.includes(alice.b.accessToken!), 'an access token reached a log');
    assert.ok(!all.includes(CUSTOMER_API_SECRET), 'the workload key reached a log');
    await c.close();
  });

  test('a whole answer: the upstream\'s completion unchanged, the wallet charged to the unit, logged under playground-default', async () => {
    const before = await balance(alice.b);
    const r = await pg(alice.b, { model: 'gpt-4o', messages: MESSAGES });
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type')!, /^application\/json/);
    assert.equal(r.json.object, 'chat.completion');
    assert.equal(r.json.choices[0].message.content, 'Hello there');
    assert.deepEqual(r.json.usage, CHAT_USAGE);
    await settled(c.st);
    assert.equal(await balance(alice.b), before - CHAT_COST);
    const [row] = await consumeRows(alice.b);
    assert.deepEqual(
      [row.user_id, row.token_name, row.token_id, row.model_name, row.quota, row.prompt_tokens, row.completion_tokens, row.is_stream],
      [alice.id, 'playground-default', 0, 'gpt-4o', CHAT_COST, CHAT_USAGE.prompt_tokens, CHAT_USAGE.completion_tokens, false],
    );
    // new-api's `group` is the playground's, not the upstream's.
    const sent = c.st.up.to('/v1/chat/completions').at(-1)!.json;
    assert.deepEqual(sent.messages, MESSAGES);
    assert.equal('group' in sent, false);
  });

  test('a streamed answer: the event stream as the edge serves it, charged once, logged as streamed', async () => {
    const before = await balance(alice.b);
    const rows = (await consumeRows(alice.b)).length;
    const r = await pg(alice.b, { model: 'gpt-4o', messages: MESSAGES, stream: true, group: 'default' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type')!, /^text\/event-stream/);
    const events = r.text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    assert.equal(events.at(-1), '[DONE]');
    const text = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, 'Hello there');
    await settled(c.st);
    assert.equal(await balance(alice.b), before - CHAT_COST);
    const all = await consumeRows(alice.b);
    assert.equal(all.length, rows + 1);
    assert.deepEqual([all[0].token_name, all[0].model_name, all[0].quota, all[0].is_stream], ['playground-default', 'gpt-4o', CHAT_COST, true]);
  });

  test('the temporary token is named by the user\'s group; another group is refused before the edge', async () => {
    const bob = await c.customer('bob');
    await credit(bob.id, CREDIT);
    assert.equal((await c.root.request('PUT', `/api/user/${bob.id}/group`, { body: { group: 'vip' } })).json.success, true);
    const runsBefore = await runs();
    const denied = await pg(bob.b, { model: 'gpt-4o', messages: MESSAGES, group: 'default' });
    assert.equal(denied.status, 403);
    assert.deepEqual(Object.keys(denied.json), ['error', 'requestId']);
    assert.equal(denied.json.requestId, denied.headers.get('x-request-id'));
    assert.equal(denied.json.error.code, 'PLAYGROUND_GROUP_DENIED');
    assert.equal(await runs(), runsBefore);
    assert.equal((await pg(bob.b, { model: 'gpt-4o', messages: MESSAGES, group: 'vip' })).status, 200);
    await settled(c.st);
    assert.equal((await consumeRows(bob.b))[0].token_name, 'playground-vip');
    assert.equal(await balance(bob.b), CREDIT - CHAT_COST);
  });

  test('no session is 401 and a personal access token is refused, in OpenAI\'s shape', async () => {
    const anonymous = await c.account.browser().post('/pg/chat/completions', { model: 'gpt-4o', messages: MESSAGES });
    assert.equal(anonymous.status, 401);
    assert.deepEqual([anonymous.json.error.code, anonymous.json.error.type, typeof anonymous.json.error.message], ['AUTH_UNAUTHORIZED', 'invalid_request_error', 'string']);
    assert.equal(anonymous.json.success, undefined);
    const pat = c.account.browser();
    pat.accessToken = await c.account.services.users.createAccessToken(alice.id);
    const before = await balance(alice.b);
    const refused = await pg(pat, { model: 'gpt-4o', messages: MESSAGES });
    assert.equal(refused.status, 403);
    assert.equal(refused.json.error.code, 'AUTH_SESSION_REQUIRED');
    assert.equal(await balance(alice.b), before);
    // The rest of the service keeps its envelope.
    assert.equal((await c.account.browser().get('/api/user/self')).json.success, false);
  });

  test('a bad body is a 400 in OpenAI\'s shape, naming the field', async () => {
    for (const body of [{ model: 'gpt-4o' }, { model: 'gpt-4o', messages: [] }, { messages: MESSAGES }, { model: 'gpt-4o', messages: MESSAGES, stream: 'yes' }]) {
      const r = await pg(alice.b, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json.error.code, 'INVALID_PARAMETERS');
      assert.equal(typeof r.json.error.param, 'string');
    }
  });

  test('an empty wallet: the edge\'s refusal passed through (402, its code, the caller\'s language), nothing charged or relayed', async () => {
    const carol = await c.customer('carol');
    const runsBefore = await runs();
    const calls = c.st.up.to('/v1/chat/completions').length;
    const r = await pg(carol.b, { model: 'gpt-4o', messages: MESSAGES, stream: true });
    assert.equal(r.status, 402, r.text);
    assert.deepEqual([r.json.error.code, r.json.error.type], ['insufficient_balance', 'insufficient_quota']);
    assert.match(r.json.error.message, /^Insufficient balance/);
    const zh = await pg(carol.b, { model: 'gpt-4o', messages: MESSAGES }, { 'accept-language': 'zh-CN' });
    assert.equal(zh.status, 402);
    assert.match(zh.json.error.message, /^余额不足/);
    assert.equal(await balance(carol.b), 0);
    assert.equal(await runs(), runsBefore);
    assert.equal(c.st.up.to('/v1/chat/completions').length, calls);
    assert.deepEqual(await consumeRows(carol.b), []);
    // A model the edge does not serve: its 404, nothing charged.
    await credit(carol.id, CREDIT);
    const unknown = await pg(carol.b, { model: 'no-such-model', messages: MESSAGES });
    assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'model_not_found']);
    assert.equal(await balance(carol.b), CREDIT);
  });

  test('a browser that goes away mid-stream ends the call; it is settled, not left running', async () => {
    assert.equal((await c.st.edge.cli('edge', 'model', 'set', 'slow-model', '--reserve', '500')).error, null);
    // node:http, whose socket the test closes itself (an aborted fetch leaves a second connection open).
    const first = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${c.account.url}/pg/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${alice.b.accessToken}`, 'content-type': 'application/json' } }, (res) => {
        assert.equal(res.statusCode, 200);
        res.once('data', (piece: Buffer) => {
          req.destroy();
          resolve(piece.toString('utf8'));
        });
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end(JSON.stringify({ model: 'slow-model', messages: MESSAGES, stream: true }));
    });
    assert.match(first, /slow/);
    await settled(c.st);
    const run = await c.st.edge.ctx.db.selectFrom('edge_runs').select(['status', 'token_name']).where('public_model_id', '=', 'slow-model').executeTakeFirstOrThrow();
    assert.deepEqual(run, { status: 'cancelled', token_name: 'playground-default' });
  });
});

// The edge's per-minute limit of a key (EDGE_RATE_LIMIT_PER_MINUTE) holds for a user's playground calls too.
for (const apart of [false, true]) test(`playground: calls beyond the edge's per-minute limit are 429 rate_limited with Retry-After, not charged${apart ? ', the edge apart' : ''}`, async () => {
  const c = await startCustomerStack({ name: 'sqlite' }, { apart, edgeEnv: { EDGE_RATE_LIMIT_PER_MINUTE: '2' } });
  try {
    const dave = await c.customer('dave');
    assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: dave.id, quota: CREDIT, reason: 'test credit' } })).json.success, true);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await dave.b.post('/pg/chat/completions', { model: 'gpt-4o', messages: MESSAGES })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    const limited = await dave.b.post('/pg/chat/completions', { model: 'gpt-4o', messages: MESSAGES });
    assert.equal(limited.json.error.code, 'rate_limited');
    assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
    await settled(c.st);
    assert.equal((await dave.b.get('/api/user/self')).json.data.quota, CREDIT - 2 * CHAT_COST);
  } finally {
    await c.close();
  }
});
