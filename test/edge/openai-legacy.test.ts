import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { relayFixture } from '../helpers/relay-fixtures.js';
import { variants } from '../helpers/services.js';
import { RATIOS, startStack, syncRunsSettled, UPSTREAM_KEY, walletOf, type Stack } from '../helpers/stack.js';

/**
 * E12 completions, E13 moderations and E14 rerank: the unchanged `openai` SDK (and a plain fetch for
 * rerank, which the SDK has not) against the edge, each call held and settled in the owner's wallet to the
 * unit of the relay's cost. In process and over the gateway's internal API (GR11–GR13); SQLite.
 */

const COMPLETION = JSON.parse(relayFixture('caller-completions/native-answer.json'));
const COMPLETION_SSE = relayFixture('caller-completions/native-stream.sse');
const RERANK_REQUEST = JSON.parse(relayFixture('caller-rerank/request.json'));
const MODERATION = { id: 'modr-1', model: 'omni-moderation-latest', results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.01 } }] };

/** Gateway prices of this file's models (the stack's own stay): completion_ratio 2 for the instruct model. */
const PRICES = { 'gpt-instruct': 1, 'omni-moderation-latest': 1, 'jina-reranker': 1, 'moonshot-reranker': 1 };
const PER_CALL = { 'priced-reranker': 0.002 };

function legacyFake() {
  const rerank = (_r: Seen, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(relayFixture('caller-rerank/jina-answer.json'));
  };
  return startFakeUpstream({
    'POST /v1/completions': (r: Seen, res: http.ServerResponse) => {
      if (!r.json?.stream) return sendJson(res, 200, COMPLETION);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(COMPLETION_SSE);
    },
    'POST /v1/moderations': (_r: Seen, res: http.ServerResponse) => sendJson(res, 200, MODERATION),
    'POST /v1/rerank': rerank,
  });
}

/** The last sync run's format and cost. */
async function lastRun(st: Stack) {
  const run = await st.edge.ctx.db.selectFrom('edge_runs').selectAll().where('kind', '=', 'sync').orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  return { format: run.format, status: run.status, cost: Number(run.cost), stream: Number(run.stream) };
}

for (const viaHttp of [false, true]) {
  describe(`edge: legacy completions, moderations and rerank with the openai SDK (${viaHttp ? 'over the relay API' : 'in process'}) [sqlite]`, () => {
    let st: Stack;
    let up: FakeUpstream;
    let client: OpenAI;
    let key: string;

    before(async () => {
      st = await startStack(variants()[0]!, { http: viaHttp });
      up = await legacyFake();
      const root = await st.gateway.staff('legacy-root', 'root');
      const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'legacy', base_url: up.url, models: 'gpt-instruct,omni-moderation-latest,jina-reranker,priced-reranker', key: UPSTREAM_KEY } });
      assert.equal(created.status, 200, created.text);
      const moonshot = await root.post('/api/channel/', { mode: 'single', channel: { type: 25, name: 'moonshot', base_url: up.url, models: 'moonshot-reranker', key: UPSTREAM_KEY } });
      assert.equal(moonshot.status, 200, moonshot.text);
      await st.gateway.services.ratios.setCurrent({
        model_ratio: { ...RATIOS.model_ratio, ...PRICES },
        completion_ratio: { ...RATIOS.completion_ratio, 'gpt-instruct': 2 },
        model_price: PER_CALL,
      });
      for (const id of [...Object.keys(PRICES), ...Object.keys(PER_CALL)]) {
        assert.equal((await st.edge.cli('edge', 'model', 'set', id, '--reserve', '2000')).error, null);
      }
      assert.equal((await st.edge.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '100000')).error, null);
      key = await st.edge.issueKey('acme');
      client = new OpenAI({ baseURL: `${st.edge.url}/v1`, apiKey: key, maxRetries: 0 });
    });
    after(async () => {
      assert.ok(!st.edge.everything().includes(UPSTREAM_KEY) && !st.gateway.everything().includes(UPSTREAM_KEY), 'the upstream key left the gateway');
      await st?.close();
      await up?.close();
    });

    test('completions: whole and streamed; the wallet charged exactly the relay\'s cost of each', async () => {
      const before = await walletOf(st, 'acme');
      const whole = await client.completions.create({ model: 'gpt-instruct', prompt: 'Say this is a test', max_tokens: 7, echo: true });
      assert.equal(whole.object, 'text_completion');
      assert.equal(whole.choices[0]!.text, '\n\nThis is indeed a test');
      assert.equal(up.seen.at(-1)!.json.echo, true, 'echo reaches an upstream that speaks completions');
      await syncRunsSettled(st);
      // 5 prompt + 7 completion tokens × completion ratio 2, model ratio 1.
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - 19, reserved: 0 });
      assert.deepEqual(await lastRun(st), { format: 'completions', status: 'succeeded', cost: 19, stream: 0 });

      const stream = await client.completions.create({ model: 'gpt-instruct', prompt: 'Say this is a test', stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
      assert.equal(text, 'This is a test');
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - 19 - 13, reserved: 0 });
      assert.deepEqual(await lastRun(st), { format: 'completions', status: 'succeeded', cost: 13, stream: 1 });
    });

    test('moderations: the answer unchanged, the default model when none is named, the counted input charged', async () => {
      const before = await walletOf(st, 'acme');
      const m = await client.moderations.create({ input: 'I want to hug a kitten' });
      assert.deepEqual(m, MODERATION);
      assert.equal(up.seen.at(-1)!.json.model, 'omni-moderation-latest');
      await syncRunsSettled(st);
      const cost = countTokens('I want to hug a kitten');
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - cost, reserved: 0 });
      assert.deepEqual(await lastRun(st), { format: 'moderations', status: 'succeeded', cost, stream: 0 });
    });

    test("rerank (plain fetch): Jina's shape; billed by the upstream's tokens, or per call", async () => {
      const rerank = (body: unknown) => fetch(`${st.edge.url}/v1/rerank`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const before = await walletOf(st, 'acme');
      const res = await rerank({ ...RERANK_REQUEST, model: 'jina-reranker' });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), JSON.parse(relayFixture('caller-rerank/expected.json')));
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - 38, reserved: 0 });

      const priced = await rerank({ ...RERANK_REQUEST, model: 'priced-reranker', return_documents: false });
      assert.equal(priced.status, 200);
      assert.equal('document' in (await priced.json()).results[0], false);
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), { balance: before.balance - 38 - 1000, reserved: 0 });
      assert.deepEqual(await lastRun(st), { format: 'rerank', status: 'succeeded', cost: 1000, stream: 0 });
    });

    test("errors in OpenAI's shape: unknown model 404, bad bodies 400, a channel without rerank 400 — nothing charged, nothing held", async () => {
      const before = await walletOf(st, 'acme');
      await assert.rejects(client.completions.create({ model: 'no-such-model', prompt: 'x' }), (e: any) => e.status === 404 && e.code === 'model_not_found' && e.type === 'invalid_request_error');
      await assert.rejects(client.moderations.create({ model: 'no-such-model', input: 'x' }), (e: any) => e.status === 404 && e.code === 'model_not_found');
      await assert.rejects(client.completions.create({ model: 'gpt-instruct' } as any), (e: any) => e.status === 400 && e.code === 'invalid_request_body' && e.type === 'invalid_request_error');
      await assert.rejects(client.moderations.create({ model: 'omni-moderation-latest', input: 42 } as any), (e: any) => e.status === 400 && e.code === 'invalid_request_body');

      const bad = await fetch(`${st.edge.url}/v1/rerank`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'jina-reranker', query: 'q', documents: [] }) });
      assert.equal(bad.status, 400);
      const badBody = (await bad.json()) as any;
      assert.equal(badBody.error.code, 'invalid_request_body');
      assert.equal(badBody.error.type, 'invalid_request_error');

      const refused = await fetch(`${st.edge.url}/v1/rerank`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...RERANK_REQUEST, model: 'moonshot-reranker' }) });
      assert.equal(refused.status, 400);
      const refusal = (await refused.json()) as any;
      assert.equal(refusal.error.code, 'relay_invalid_request');
      assert.match(refusal.error.message, /serves no rerank/);
      await syncRunsSettled(st);
      assert.deepEqual(await walletOf(st, 'acme'), before);
      const noKey = await fetch(`${st.edge.url}/v1/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...RERANK_REQUEST, model: 'jina-reranker' }) });
      assert.equal(noKey.status, 401);
    });
  });
}
