import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { relayFixture } from '../helpers/relay-fixtures.js';
import { closeRelayTest, relay, RELAY_ENV, relayToken, sentOnce, type RelayReply } from '../helpers/relay.js';
import { variants } from '../helpers/services.js';

/**
 * The rest of OpenAI's JSON API through the relay over HTTP (GR11 completions, GR12 moderations, GR13 rerank,
 * and GR07's quotes of them): channels of each family that can serve them, fake upstreams answering with the
 * formats' golden files, the official `openai` SDK as a caller. Format handling does not depend on the
 * database: SQLite only.
 */

const KEY = 'sk-legacy-KEY-0123456789abcdef';
const text = (name: string) => relayFixture(name);
const json = (name: string): any => JSON.parse(text(name));

const COMPLETION = json('caller-completions/native-answer.json');
const COMPLETION_SSE = text('caller-completions/native-stream.sse');
const MODERATION = {
  id: 'modr-0d9740456c391e43c445bf0f010940c7',
  model: 'omni-moderation-latest',
  results: [{ flagged: true, categories: { violence: true }, category_scores: { violence: 0.91 }, category_applied_input_types: { violence: ['text'] } }],
};
const RERANK_REQUEST = json('caller-rerank/request.json');
const ANTHROPIC_TEXT = 'Hello! How can I help you today?';
const GEMINI_MODEL = 'gemini-2.0-flash';

/** Caller model → [model_ratio, completion_ratio]. */
const RATIOS: Record<string, [number, number]> = {
  'gpt-instruct': [1, 2],
  'instruct-az': [1, 2],
  'claude-instruct': [1.5, 5],
  'gemini-instruct': [0.05, 4],
  'mixed-instruct': [1, 1],
  'omni-moderation-latest': [0.1, 1],
  'claude-moderation': [1, 1],
  'jina-reranker': [0.5, 1],
  'sf-reranker': [1, 1],
  'xinf-reranker': [1, 1],
  'moonshot-reranker': [1, 1],
  'jina-embeddings-v3': [1, 1],
};
/** Priced per call: $0.002 = 1,000 quota units. */
const PER_CALL = { 'priced-reranker': 0.002 };

function quotaOf(model: string, prompt: number, completion: number): number {
  const [modelRatio, completionRatio] = RATIOS[model]!;
  const exact = (prompt + completion * completionRatio) * modelRatio;
  return Math.max(Math.round(exact), exact > 0 ? 1 : 0);
}

function assertBilled(r: RelayReply, model: string, prompt: number, completion: number, counted = false) {
  assert.equal(r.summary?.status, 200, JSON.stringify(r.summary));
  assert.equal(r.summary.error_code, null);
  assert.equal(r.summary.model, model);
  assert.deepEqual(r.summary.usage, { prompt_tokens: prompt, completion_tokens: completion, cached_tokens: r.summary.usage.cached_tokens, reasoning_tokens: 0, total_tokens: prompt + completion, counted });
  assert.equal(r.summary.quota, quotaOf(model, prompt, completion));
}

function sendText(res: http.ServerResponse, contentType: string, body: string, separator?: string) {
  res.writeHead(200, { 'content-type': contentType });
  if (!separator) return void res.end(body);
  const pieces = body.split(separator);
  pieces.forEach((p, i) => res.write(i < pieces.length - 1 ? p + separator : p));
  res.end();
}

function upstreamRoutes() {
  const completion = (r: Seen, res: http.ServerResponse) => (r.json?.stream ? sendText(res, 'text/event-stream', COMPLETION_SSE, '\n\n') : sendText(res, 'application/json', JSON.stringify(COMPLETION)));
  const rerank = (file: string) => (_r: Seen, res: http.ServerResponse) => sendText(res, 'application/json', text(`caller-rerank/${file}`));
  return {
    'POST /openai/v1/completions': completion,
    'POST /azure/openai/deployments/prod-instruct/completions': completion,
    'POST /openai/v1/moderations': (_r: Seen, res: http.ServerResponse) => sendJson(res, 200, MODERATION),
    'POST /anthropic/v1/messages': (r: Seen, res: http.ServerResponse) =>
      r.json?.stream ? sendText(res, 'text/event-stream', text('anthropic/messages-stream.txt'), '\n\n') : sendText(res, 'application/json', text('anthropic/messages-response.json')),
    [`POST /gemini/v1beta/models/${GEMINI_MODEL}:generateContent`]: (_r: Seen, res: http.ServerResponse) => sendText(res, 'application/json', text('gemini/response.gemini.json')),
    [`POST /gemini/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`]: (_r: Seen, res: http.ServerResponse) => sendText(res, 'text/event-stream', text('gemini/stream.sse'), '\n\n'),
    'POST /jina/v1/rerank': rerank('jina-answer.json'),
    'POST /sf/v1/rerank': rerank('siliconflow-answer.json'),
    'POST /xinf/v1/rerank': rerank('xinference-answer.json'),
    'POST /moonshot/v1/rerank': rerank('jina-answer.json'),
    'POST /jina/v1/embeddings': (r: Seen, res: http.ServerResponse) =>
      sendJson(res, 200, { model: r.json?.model, object: 'list', usage: { total_tokens: 4, prompt_tokens: 4 }, data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }] }),
  };
}

describe('relay: legacy completions, moderations and rerank over HTTP [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;

  before(async () => {
    up = await startFakeUpstream(upstreamRoutes());
    s = await startGateway(variants()[0]!, { env: { ...RELAY_ENV } });
    root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent({
      model_ratio: Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r[0]])),
      completion_ratio: Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r[1]])),
      model_price: PER_CALL,
    });
    const add = async (name: string, type: number, base: string, models: string, fields: Record<string, unknown> = {}) => {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name, base_url: `${up.url}${base}`, models, key: KEY, group: 'default', ...fields } });
      assert.equal(r.status, 200, r.text);
    };
    await add('openai', 1, '/openai', 'gpt-instruct,omni-moderation-latest,mixed-instruct');
    await add('azure', 3, '/azure', 'instruct-az', { model_mapping: JSON.stringify({ 'instruct-az': 'prod-instruct' }), other: '2024-06-01' });
    await add('anthropic', 14, '/anthropic', 'claude-instruct,claude-moderation,mixed-instruct', { priority: 10, model_mapping: JSON.stringify({ 'claude-instruct': 'claude-sonnet-4-5', 'mixed-instruct': 'claude-sonnet-4-5' }) });
    await add('gemini', 24, '/gemini', 'gemini-instruct', { model_mapping: JSON.stringify({ 'gemini-instruct': GEMINI_MODEL }) });
    await add('jina', 38, '/jina', 'jina-reranker,priced-reranker,jina-embeddings-v3', { model_mapping: JSON.stringify({ 'jina-reranker': 'jina-reranker-v2-base-multilingual', 'priced-reranker': 'jina-reranker-v2-base-multilingual' }) });
    await add('siliconflow', 40, '/sf', 'sf-reranker', { model_mapping: JSON.stringify({ 'sf-reranker': 'BAAI/bge-reranker-v2-m3' }) });
    await add('xinference', 47, '/xinf', 'xinf-reranker');
    await add('moonshot', 25, '/moonshot', 'moonshot-reranker');
  });
  after(() => closeRelayTest(s, up, KEY));
  beforeEach(() => {
    up.seen.length = 0;
  });

  const sent = (pathname: string): Seen => sentOnce(up, pathname);

  const sdk = async () => new OpenAI({ baseURL: `${s.url}/relay/v1`, apiKey: await relayToken(), maxRetries: 0, timeout: 10_000 });

  // ---- completions ----

  test('completions → OpenAI channel: passed through byte for byte (echo, suffix, n and a prompt list reach it), billed by its usage', async () => {
    const body = { model: 'gpt-instruct', prompt: ['Say this is a test', 'And this'], max_tokens: 7, n: 2, echo: true, suffix: '!', logprobs: 1 };
    const r = await relay(s.url, '/completions', body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, JSON.stringify(COMPLETION));
    assertBilled(r, 'gpt-instruct', 5, 7);
    const req = sent('/openai/v1/completions');
    assert.deepEqual(req.json, { ...body, stream: false });
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  });

  test('completions → OpenAI channel streamed: the chunks as they came; usage asked of the upstream, shown only when the caller asked', async () => {
    const asked = await relay(s.url, '/completions', { model: 'gpt-instruct', prompt: 'Say this is a test', stream: true, stream_options: { include_usage: true } });
    assert.equal(asked.status, 200, asked.text);
    assert.equal(asked.text.split('\n: relay-summary ')[0] + '\n', COMPLETION_SSE, 'the stream as the upstream wrote it');
    assertBilled(asked, 'gpt-instruct', 5, 4);

    up.seen.length = 0;
    const quiet = await relay(s.url, '/completions', { model: 'gpt-instruct', prompt: 'Say this is a test', stream: true });
    assert.equal(sent('/openai/v1/completions').json.stream_options.include_usage, true);
    assert.ok(!quiet.events.some((e) => e?.usage), 'no usage chunk unasked');
    assert.equal(quiet.events.at(-1), '[DONE]');
    assertBilled(quiet, 'gpt-instruct', 5, 4);
  });

  test('openai SDK: completions whole and streamed through OpenAI-compatible and Azure channels', async () => {
    const client = await sdk();
    const whole = await client.completions.create({ model: 'instruct-az', prompt: 'Say this is a test', max_tokens: 7 });
    assert.equal(whole.object, 'text_completion');
    assert.equal(whole.choices[0]!.text, '\n\nThis is indeed a test');
    assert.equal(whole.usage?.total_tokens, 12);
    const az = sent('/azure/openai/deployments/prod-instruct/completions');
    assert.equal(az.url.search, '?api-version=2024-06-01');
    assert.equal(az.headers['api-key'], KEY);
    assert.equal(az.json.model, 'prod-instruct');

    const stream = await client.completions.create({ model: 'gpt-instruct', prompt: 'Say this is a test', stream: true, stream_options: { include_usage: true } });
    let streamed = '';
    let usage = 0;
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'text_completion');
      streamed += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage.total_tokens;
    }
    assert.equal(streamed, 'This is a test');
    assert.equal(usage, 9);
  });

  test('completions → Anthropic channel: the prompt as a user message (16 tokens unless capped), a text_completion back', async () => {
    const r = await relay(s.url, '/completions', { model: 'claude-instruct', prompt: 'Say hello', temperature: 0.5 });
    assert.equal(r.status, 200, r.text);
    const req = sent('/anthropic/v1/messages');
    assert.deepEqual(req.json.messages, [{ role: 'user', content: 'Say hello' }]);
    assert.equal(req.json.max_tokens, 16, "OpenAI's default for completions");
    assert.equal(req.json.temperature, 0.5);
    assert.equal(req.json.model, 'claude-sonnet-4-5');
    assert.equal(r.json.object, 'text_completion');
    assert.match(r.json.id, /^cmpl-/);
    assert.deepEqual(r.json.choices, [{ text: ANTHROPIC_TEXT, index: 0, logprobs: null, finish_reason: 'stop' }]);
    assert.deepEqual([r.json.usage.prompt_tokens, r.json.usage.completion_tokens], [2160, 15]);
    assertBilled(r, 'claude-instruct', 2160, 15);
  });

  test('openai SDK: completions streamed through Anthropic and Gemini channels, text_completion chunks and the usage', async () => {
    const client = await sdk();
    for (const c of [
      { model: 'claude-instruct', path: '/anthropic/v1/messages', text: 'Hello!' },
      { model: 'gemini-instruct', path: `/gemini/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`, text: 'The sky looks blue because air scatters blue light the most.\n' },
    ]) {
      up.seen.length = 0;
      const stream = await client.completions.create({ model: c.model, prompt: 'Hello', max_tokens: 50, stream: true, stream_options: { include_usage: true } });
      let streamed = '';
      const finishes: string[] = [];
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'text_completion');
        streamed += chunk.choices[0]?.text ?? '';
        if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
        usage = chunk.usage ?? usage;
      }
      assert.equal(streamed, c.text);
      assert.deepEqual(finishes, ['stop']);
      assert.ok(usage && usage.prompt_tokens > 0 && usage.completion_tokens > 0, JSON.stringify(usage));
      assert.equal(sent(c.path).json.generationConfig?.maxOutputTokens ?? sent(c.path).json.max_tokens, 50);
    }
    const whole = await client.completions.create({ model: 'gemini-instruct', prompt: 'Describe the picture' });
    assert.equal(whole.choices[0]!.text, 'A grey cat is sleeping on a sunny windowsill.');
    assert.deepEqual([whole.usage?.prompt_tokens, whole.usage?.completion_tokens], [270, 17]);
  });

  test('what chat cannot carry goes to a channel that speaks completions, else a 400 naming it (never a 500)', async () => {
    // mixed-instruct: the Anthropic channel first (priority 10), the OpenAI one after it.
    const plain = await relay(s.url, '/completions', { model: 'mixed-instruct', prompt: 'Say hello' });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.json.choices[0].text, ANTHROPIC_TEXT, 'converted by the first channel');

    up.seen.length = 0;
    const suffix = await relay(s.url, '/completions', { model: 'mixed-instruct', prompt: 'def f(', suffix: '\n    return 1' });
    assert.equal(suffix.status, 200, suffix.text);
    assert.equal(suffix.text, JSON.stringify(COMPLETION), 'served by the OpenAI channel');
    assert.equal(up.seen.filter((x) => x.path === '/anthropic/v1/messages').length, 0, 'the Anthropic channel was sent nothing');
    assert.equal(sent('/openai/v1/completions').json.suffix, '\n    return 1');
    assert.deepEqual(suffix.summary.attempts.map((a: any) => a.error_code), ['relay_invalid_request', null]);

    for (const body of [{ suffix: 'x' }, { prompt: ['a', 'b'] }, { echo: true }]) {
      up.seen.length = 0;
      const r = await relay(s.url, '/completions', { model: 'claude-instruct', prompt: 'p', ...body });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.error.code, 'relay_invalid_request');
      assert.equal(r.json.error.type, 'invalid_request_error');
      assert.match(r.json.error.message, /served only by channels that speak completions/);
      assert.equal(up.seen.length, 0);
    }
  });

  test('GR11 refuses a body without a prompt, or with a bad one, in OpenAI\'s shape', async () => {
    const missing = await relay(s.url, '/completions', { model: 'gpt-instruct' });
    assert.equal(missing.status, 400, missing.text);
    assert.equal(missing.json.error.code, 'relay_invalid_request');
    const bad = await relay(s.url, '/completions', { model: 'gpt-instruct', prompt: { text: 'x' } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.type, 'invalid_request_error');
    assert.equal(up.seen.length, 0);
  });

  // ---- moderations ----

  test('moderations → OpenAI channel: the answer unchanged, the input counted; the default model when the body names none', async () => {
    const client = await sdk();
    const m = await client.moderations.create({ input: 'I will hurt you' });
    assert.deepEqual(m, MODERATION);
    assert.deepEqual(sent('/openai/v1/moderations').json, { input: 'I will hurt you', model: 'omni-moderation-latest' });

    up.seen.length = 0;
    const input = ['I will hurt you', 'have a nice day'];
    const r = await relay(s.url, '/moderations', { model: 'omni-moderation-latest', input });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, JSON.stringify(MODERATION));
    assertBilled(r, 'omni-moderation-latest', countTokens(input.join('\n')), 0, true);
  });

  test('moderations on a model whose channels serve none: 400 saying so; no input: 400', async () => {
    const r = await relay(s.url, '/moderations', { model: 'claude-moderation', input: 'x' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'relay_invalid_request');
    assert.match(r.json.error.message, /this model serves no moderations/);
    assert.equal(up.seen.length, 0);
    const none = await relay(s.url, '/moderations', { model: 'omni-moderation-latest' });
    assert.equal(none.status, 400, none.text);
  });

  // ---- rerank ----

  test("rerank → Jina channel: the body passed on, the answer in Jina's shape, billed by usage.total_tokens", async () => {
    const r = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'jina-reranker' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, json('caller-rerank/expected.json'));
    assertBilled(r, 'jina-reranker', 38, 0);
    const req = sent('/jina/v1/rerank');
    assert.deepEqual(req.json, { ...RERANK_REQUEST, model: 'jina-reranker-v2-base-multilingual' });
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  });

  test('rerank → SiliconFlow and Xinference (OpenAI-compatible types): their usage or the counted prompt; a per-call price', async () => {
    const sf = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'sf-reranker', return_documents: false });
    assert.equal(sf.status, 200, sf.text);
    assert.deepEqual(sf.json.results, [
      { index: 0, relevance_score: 0.9953 },
      { index: 2, relevance_score: 0.9411 },
    ]);
    assertBilled(sf, 'sf-reranker', 44, 0);
    assert.equal(sent('/sf/v1/rerank').json.model, 'BAAI/bge-reranker-v2-m3');

    const xinf = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'xinf-reranker' });
    assert.equal(xinf.status, 200, xinf.text);
    const docs = RERANK_REQUEST.documents.map((d: any) => (typeof d === 'string' ? d : d.text));
    const counted = countTokens([...docs, RERANK_REQUEST.query].join('\n'));
    assertBilled(xinf, 'xinf-reranker', counted, 0, true);
    assert.deepEqual(xinf.json.usage, { prompt_tokens: counted, total_tokens: counted });
    assert.deepEqual(xinf.json.results[0].document, { text: docs[0] }, "the request's document where the upstream sent an empty one");

    const priced = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'priced-reranker' });
    assert.equal(priced.status, 200, priced.text);
    assert.equal(priced.summary.quota, 1000, '$0.002 per call');
  });

  test('rerank refused clearly: a Moonshot channel, a chat-only channel, a bad body', async () => {
    const moonshot = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'moonshot-reranker' });
    assert.equal(moonshot.status, 400, moonshot.text);
    assert.match(moonshot.json.error.message, /this model serves no rerank/);
    const claude = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'claude-instruct' });
    assert.equal(claude.status, 400, claude.text);
    assert.equal(up.seen.length, 0, 'no upstream was asked');
    for (const body of [{ documents: [] }, { query: 3 }, { top_n: 0 }]) {
      const bad = await relay(s.url, '/rerank', { ...RERANK_REQUEST, model: 'jina-reranker', ...body });
      assert.equal(bad.status, 400, bad.text);
      assert.equal(bad.json.error.type, 'invalid_request_error');
    }
  });

  test('a Jina channel: embeddings at /v1/embeddings (its floats as base64 when the caller asks), chat refused', async () => {
    const client = await sdk();
    const e = await client.embeddings.create({ model: 'jina-embeddings-v3', input: 'hello' });
    assert.deepEqual(e.data[0]!.embedding, [0.5, -0.25], "the SDK's default base64, encoded from Jina's floats");
    const req = sent('/jina/v1/embeddings');
    assert.equal('encoding_format' in req.json, false, 'OpenAI\'s encoding_format is not Jina\'s');
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    const chat = await relay(s.url, '/chat/completions', { model: 'jina-reranker', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(chat.status, 400, chat.text);
    assert.match(chat.json.error.message, /this model serves no chat/);
  });

  // ---- quotes and the budget ----

  test('GR07 quotes the new formats: completions with their cap (16 unset), moderations and rerank by input, a per-call price', async () => {
    const quote = async (format: string, body: Record<string, unknown>) => {
      const r = await relay(s.url, '/quote', { format, body });
      assert.equal(r.status, 200, r.text);
      return r.json;
    };
    const prompt = countTokens('Say this is a test');
    assert.deepEqual(await quote('completions', { model: 'gpt-instruct', prompt: 'Say this is a test' }), { minimum: prompt + 2, estimate: prompt + 16 * 2 });
    assert.deepEqual(await quote('completions', { model: 'gpt-instruct', prompt: 'Say this is a test', max_tokens: 100 }), { minimum: prompt + 2, estimate: prompt + 100 * 2 });
    const moderation = Math.ceil(countTokens('hello there') * 0.1);
    assert.deepEqual(await quote('moderations', { input: 'hello there' }), { minimum: moderation, estimate: moderation });
    const docs = RERANK_REQUEST.documents.map((d: any) => (typeof d === 'string' ? d : d.text));
    const rerank = Math.ceil(countTokens([...docs, RERANK_REQUEST.query].join('\n')) * 0.5);
    assert.deepEqual(await quote('rerank', { ...RERANK_REQUEST, model: 'jina-reranker' }), { minimum: rerank, estimate: rerank });
    assert.deepEqual(await quote('rerank', { ...RERANK_REQUEST, model: 'priced-reranker' }), { minimum: 1000, estimate: 1000 });
  });

  test("a budget caps a completion's max_tokens at what it pays for", async () => {
    const prompt = countTokens('Say this is a test');
    // model_ratio 1, completion_ratio 2: 40 units pay the prompt and (40 - prompt) / 2 output tokens.
    const r = await relay(s.url, '/completions', { model: 'gpt-instruct', prompt: 'Say this is a test', max_tokens: 500 }, { headers: { 'x-relay-budget': '40' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(sent('/openai/v1/completions').json.max_tokens, Math.floor((40 - prompt) / 2));
    up.seen.length = 0;
    await relay(s.url, '/completions', { model: 'gpt-instruct', prompt: 'Say this is a test' }, { headers: { 'x-relay-budget': '100000' } });
    assert.equal('max_tokens' in sent('/openai/v1/completions').json, false, "OpenAI's default of 16 is within the budget: the body is left as sent");
  });
});
