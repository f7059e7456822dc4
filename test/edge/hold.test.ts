import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { RATIOS, startStack, type Stack } from '../helpers/stack.js';
import { sendJson, sendSse, type Seen } from '../helpers/fake-upstream.js';
import { admit, ownerIdOf, runRow, until, walletOf } from '../helpers/runs.js';
import type { EdgeServer } from '../helpers/edge.js';

/** What the fake answers when nothing caps it, and what it answers when told to ignore the cap. */
const LONG = 50_000;
const HUGE = 1_000_000;
const PROMPT = 5;
/** gpt-4o at the gateway: model_ratio 2, completion_ratio 3. */
const costOf = (completion: number) => (PROMPT + completion * 3) * 2;
/** text-embedding-3-small priced per call: 0.01 USD = 5,000 units. */
const PER_CALL = 5_000;

/** An upstream that writes as long as it is let (the cap it was sent), or ignores the cap when the prompt says so. */
function completionOf(r: Seen): number {
  const asked = r.json?.max_completion_tokens ?? r.json?.max_tokens ?? r.json?.max_output_tokens;
  if (r.body.includes('ignore the cap')) return HUGE;
  return typeof asked === 'number' ? Math.min(asked, LONG) : LONG;
}

function longAnswers(st: Stack) {
  st.up.routes['POST /v1/chat/completions'] = (r: Seen, res: http.ServerResponse) => {
    const usage = { prompt_tokens: PROMPT, completion_tokens: completionOf(r), total_tokens: PROMPT + completionOf(r) };
    const chunk = (delta: object, finish: string | null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] });
    if (r.json?.stream) return sendSse(res, [chunk({ role: 'assistant', content: 'long' }, null), chunk({}, 'length'), { ...chunk({}, null), choices: [], usage }]);
    sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'long' }, finish_reason: 'length' }], usage });
  };
  st.up.routes['POST /v1/responses'] = (r: Seen, res: http.ServerResponse) => {
    const out = completionOf(r);
    sendJson(res, 200, { id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o', output: [{ type: 'message', id: 'm', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'long', annotations: [] }] }], usage: { input_tokens: PROMPT, output_tokens: out, total_tokens: PROMPT + out } });
  };
}

eachDatabase('edge holds: a call never costs more than it holds, and is charged exactly its cost', (v) => {
  let st: Stack;
  let s: EdgeServer;
  const chat = (key: string, body: Record<string, unknown>) => s.request('POST', '/v1/chat/completions', { token: key, body: { model: 'long', messages: [{ role: 'user', content: 'write at length' }], ...body } });
  const runOf = async (requestId: string) => s.ctx.db.selectFrom('edge_runs').selectAll().where('request_id', '=', requestId).executeTakeFirstOrThrow();
  /** The gateway's own log of a call: what it cost. */
  const loggedCost = async (owner: string, runId: string) => {
    const summary = await st.gateway.relay.engine.summaryOf(runId, { issuer: 'edge', subject: `owner-${await ownerIdOf(s, owner)}` });
    return summary!.quota;
  };
  const settled = (runId: string) => until('the call is settled', async () => ['succeeded', 'failed', 'cancelled'].includes((await runRow(s, runId)).status));

  before(async () => {
    st = await startStack(v, { http: true });
    s = st.edge;
    longAnswers(st);
    await st.gateway.services.ratios.setCurrent({ ...RATIOS, model_price: { 'text-embedding-3-small': 0.01 } });
    for (const [id, gateway] of [['long', 'gpt-4o'], ['embed', 'text-embedding-3-small']]) assert.equal((await s.cli('edge', 'model', 'set', id, '--reserve', '1000', '--gateway-model', gateway!, '--overdraft', '0')).error, null);
  });
  after(() => st.close());

  test('20 calls of a model reserving 1,000 (no overdraft): each charged its cost, never more than it held', async () => {
    const START = 10_000_000;
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'rich', '--amount', String(START))).error, null);
    const key = await s.issueKey('rich');
    const runs: string[] = [];
    for (let i = 0; i < 20; i++) {
      let runId: string;
      if (i % 5 === 4) {
        // SPEC's admitted run, executed by the worker.
        runId = (await admit(s, key, 'long', 'write at length')).runId;
        await s.worker!.tick();
        await s.worker!.drain();
      } else {
        const body = [{}, { max_tokens: 8000 }, { max_completion_tokens: 3000, stream: true, stream_options: { include_usage: true } }, { max_tokens: 100_000 }][i % 5]!;
        const r = i % 5 === 3 ? await s.respond(key, { model: 'long', input: 'write at length', max_output_tokens: 2000 }) : await chat(key, body);
        assert.equal(r.status, 200, r.text);
        runId = (await runOf(r.headers.get('x-request-id')!)).run_id;
      }
      await settled(runId);
      runs.push(runId);
    }
    let charged = 0;
    let cost = 0;
    for (const runId of runs) {
      const row = await runRow(s, runId);
      const logged = await loggedCost('rich', runId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.cost), logged, `run ${runId} charged its cost`);
      assert.ok(logged <= Number(row.reserved_amount), `run ${runId} cost ${logged}, held ${row.reserved_amount}`);
      charged += Number(row.cost);
      cost += logged;
    }
    assert.equal(charged, cost);
    assert.ok(cost > 20 * 1000, `the calls cost more than 20 reserves (${cost})`);
    const w = await walletOf(s, 'rich');
    assert.deepEqual([w.balance, w.reserved], [START - charged, 0]);
    // What went upstream: a caller's own cap kept, none given capped at what the reserve pays for.
    const chats = st.up.to('/v1/chat/completions').map((r) => r.json);
    assert.ok(chats.every((b) => Math.max(b.max_tokens ?? 0, b.max_completion_tokens ?? 0) > 0), 'every chat went out with a cap');
    assert.ok(chats.some((b) => b.max_tokens === 8000) && chats.some((b) => b.max_completion_tokens === 3000));
    assert.ok(chats.filter((b) => !b.stream && b.max_tokens !== 8000 && b.max_tokens !== 100_000).every((b) => costOf(b.max_tokens) <= 1000));
  });

  test('a wallet that cannot pay for the answer asked holds what it has and gets the answer that pays for', async () => {
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'small', '--amount', '5000')).error, null);
    const key = await s.issueKey('small');
    const r = await chat(key, { max_tokens: 100_000 });
    assert.equal(r.status, 200, r.text);
    const run = await runOf(r.headers.get('x-request-id')!);
    await settled(run.run_id);
    const row = await runRow(s, run.run_id);
    assert.equal(Number(row.reserved_amount), 5000);
    const sent = st.up.to('/v1/chat/completions').at(-1)!.json.max_tokens;
    assert.ok(sent < 100_000 && costOf(sent) <= 5000, `max_tokens ${sent} sent upstream`);
    assert.equal(Number(row.cost), costOf(sent));
    assert.equal(Number(row.cost), await loggedCost('small', run.run_id));
    const w = await walletOf(s, 'small');
    assert.deepEqual([w.balance, w.reserved], [5000 - costOf(sent), 0]);
  });

  test('402 insufficient_balance up front when the wallet cannot cover the prompt and one output token; nothing relayed', async () => {
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'tiny', '--amount', '1500')).error, null);
    const key = await s.issueKey('tiny');
    const seen = st.up.seen.length;
    // About 1,000 prompt tokens at 2 units each: more than the 1,500 the wallet has, though above the reserve.
    const r = await s.request('POST', '/v1/chat/completions', { token: key, body: { model: 'long', messages: [{ role: 'user', content: 'lorem ipsum '.repeat(500) }] } });
    assert.equal(r.status, 402, r.text);
    assert.equal(r.json.error.code, 'insufficient_balance');
    assert.equal(st.up.seen.length, seen, 'nothing was sent upstream');
    const w = await walletOf(s, 'tiny');
    assert.deepEqual([w.balance, w.reserved], [1500, 0]);
    assert.equal((await chat(key, {})).status, 200, 'a short prompt is served within the same wallet');
  });

  test('a per-call price is held whole: 402 below it, charged exactly it', async () => {
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'percall', '--amount', String(PER_CALL - 1))).error, null);
    const key = await s.issueKey('percall');
    const embed = () => s.request('POST', '/v1/embeddings', { token: key, body: { model: 'embed', input: 'hello', encoding_format: 'float' } });
    const poor = await embed();
    assert.equal(poor.status, 402, poor.text);
    assert.equal(poor.json.error.code, 'insufficient_balance');
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'percall', '--amount', '1')).error, null);
    const r = await embed();
    assert.equal(r.status, 200, r.text);
    const row = await runOf(r.headers.get('x-request-id')!);
    assert.deepEqual([Number(row.reserved_amount), Number(row.cost)], [PER_CALL, PER_CALL]);
    assert.deepEqual(await walletOf(s, 'percall').then((w) => [w.balance, w.reserved]), [0, 0]);
  });

  test('an upstream reporting usage past the cap it was sent is priced within it (the relay bounds usage) and charged exactly that', async () => {
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'ignored', '--amount', '20000')).error, null);
    const key = await s.issueKey('ignored');
    const r = await s.request('POST', '/v1/chat/completions', { token: key, body: { model: 'long', messages: [{ role: 'user', content: 'ignore the cap' }] } });
    assert.equal(r.status, 200, r.text);
    const row = await runOf(r.headers.get('x-request-id')!);
    await settled(row.run_id);
    const logged = await loggedCost('ignored', row.run_id);
    const done = await runRow(s, row.run_id);
    assert.ok(logged < costOf(HUGE) && logged <= Number(done.reserved_amount), `logged ${logged}`);
    assert.equal(Number(done.cost), logged);
    assert.deepEqual(await walletOf(s, 'ignored').then((w) => [w.balance, w.reserved]), [20_000 - logged, 0]);
  });

  test('the relay over HTTP: quote, and a budget caps the output field of every caller format', async () => {
    const relay = s.services.relay;
    const caller = { issuer: 'edge', subject: 'owner-quote', group: 'default' };
    const messages = [{ role: 'user', content: 'hi' }];
    const q = await relay.quote({ format: 'chat', body: { model: 'gpt-4o', messages, max_tokens: 100 }, caller });
    assert.ok(q.minimum > 6 && q.estimate === q.minimum + 99 * 6, JSON.stringify(q));
    assert.equal((await relay.quote({ format: 'chat', body: { model: 'gpt-4o', messages }, caller })).estimate, null);
    assert.deepEqual(await relay.quote({ format: 'embeddings', body: { model: 'text-embedding-3-small', input: 'x' }, caller }), { minimum: PER_CALL, estimate: PER_CALL });
    const budget = q.minimum + 9 * 6; // ten output tokens
    const sent = async (call: Parameters<typeof relay.relay>[0]) => {
      const a = await relay.relay(call);
      if (a.kind === 'stream') for await (const _ of a.pieces);
      return st.up.seen.at(-1)!.json;
    };
    const base = { caller, requestId: 'budget-test', budget };
    assert.equal((await sent({ ...base, format: 'chat', body: { model: 'gpt-4o', messages } })).max_tokens, 10);
    assert.equal((await sent({ ...base, format: 'chat', body: { model: 'gpt-4o', messages, max_tokens: 4 } })).max_tokens, 4);
    assert.equal((await sent({ ...base, format: 'responses', body: { model: 'gpt-4o', input: 'hi', max_output_tokens: 500 } })).max_output_tokens, 10);
    const anthropic = await sent({ ...base, format: 'anthropic', body: { model: 'gpt-4o', max_tokens: 500, messages } });
    assert.equal(anthropic.max_completion_tokens ?? anthropic.max_tokens, 10);
    const gemini = await sent({ ...base, format: 'gemini', modelInPath: { model: 'gpt-4o', stream: false }, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 500 } } });
    assert.equal(gemini.max_completion_tokens ?? gemini.max_tokens, 10);
  });
});
