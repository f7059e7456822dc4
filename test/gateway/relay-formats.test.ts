import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import OpenAI from 'openai';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { relayFixture } from '../helpers/relay-fixtures.js';
import { closeRelayTest, relay, RELAY_ENV, relayToken, sentOnce, streamedText, type RelayReply } from '../helpers/relay.js';
import { variants } from '../helpers/services.js';

/**
 * Every format conversion of the relay end to end, over real HTTP: callers in Chat Completions, Responses
 * and embeddings formats, channels of each family, fake upstreams answering with the golden files the
 * converters' unit tests were written against (src/gateway/providers/<family>/fixtures), and the official `openai`
 * SDK as the caller. Format conversion does not depend on the database: SQLite only.
 */

const KEY = 'sk-formats-KEY-0123456789abcdef';
const text = (family: string, name: string) => relayFixture(`${family}/${name}`);
const json = (family: string, name: string): any => JSON.parse(text(family, name));

// ---- the golden files the fakes answer with ----

/** OpenAI's own chat completion and chat chunks (the Responses converter's inputs). */
const OPENAI_ANSWER = json('caller-responses', 'text-answer.case.json').completion;
const OPENAI_CHUNKS: any[] = json('caller-responses', 'text-stream.case.json').chunks;
/** OpenAI's Responses API: a whole `response` and its event stream. */
const RESPONSES_REQUEST = json('caller-responses', 'text-answer.case.json').request;
const RESPONSES_ANSWER = text('caller-responses', 'text-answer.response.json');
const RESPONSES_STREAM_REQUEST = json('caller-responses', 'text-stream.case.json').request;
const RESPONSES_SSE = text('caller-responses', 'text-stream.sse');

const ANTHROPIC_MODEL = 'claude-sonnet-4-5';
const GEMINI_MODEL = 'gemini-2.0-flash';
const OLLAMA = {
  request: json('ollama', 'chat-request.json'),
  response: json('ollama', 'chat-response.json'),
  toolsResponse: json('ollama', 'chat-response-tools.json'),
  stream: json('ollama', 'chat-stream.json'),
  toolsStream: json('ollama', 'chat-stream-tools.json'),
  embeddings: json('ollama', 'embeddings.json'),
  embeddingsMultiple: json('ollama', 'embeddings-multiple.json'),
};

/** Gemini's stream with its usageMetadata taken out. */
const GEMINI_QUIET_SSE = text('gemini', 'stream.sse').replace(/,\s*"usageMetadata": \{.*?\}\]\}/g, '');

/** Caller model → [model_ratio, completion_ratio, cache_ratio]. */
const RATIOS: Record<string, [number, number, number]> = {
  'gpt-4.1': [1, 4, 0.25],
  'gpt-4o-mini': [0.075, 4, 0.5],
  'gpt-4o-az': [1.25, 4, 0.5],
  'claude-chat': [1.5, 5, 0.1],
  'claude-embed': [1, 1, 1],
  'gemini-chat': [0.05, 4, 0.25],
  'gemini-embedding-001': [0.075, 1, 1],
  'llama-chat': [0.5, 2, 1],
  'all-minilm': [0.01, 1, 1],
  'text-embedding-3-small': [0.01, 1, 1],
  'quiet-model': [2, 3, 1],
  'gemini-quiet': [1, 1, 1],
  'utf8-model': [1, 1, 1],
};
const PRICES = {
  model_ratio: Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r[0]])),
  completion_ratio: Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r[1]])),
  cache_ratio: Object.fromEntries(Object.entries(RATIOS).map(([m, r]) => [m, r[2]])),
};

interface Usage {
  prompt: number;
  completion: number;
  cached?: number;
  reasoning?: number;
}

/** The reference's quota formula, worked out here from the ratios above (group ratio 1). */
function quotaOf(model: string, u: Usage): number {
  const [modelRatio, completionRatio, cacheRatio] = RATIOS[model];
  const cached = u.cached ?? 0;
  const exact = (u.prompt - cached + cached * cacheRatio + u.completion * completionRatio) * modelRatio;
  return Math.max(Math.round(exact), exact > 0 ? 1 : 0);
}

/** The summary says the upstream's numbers and the cost they give. */
function assertBilled(r: RelayReply, model: string, u: Usage) {
  assert.equal(r.summary?.status, 200, JSON.stringify(r.summary));
  assert.equal(r.summary.error_code, null);
  assert.deepEqual(r.summary.usage, {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    cached_tokens: u.cached ?? 0,
    reasoning_tokens: u.reasoning ?? 0,
    total_tokens: u.prompt + u.completion,
    counted: false,
  });
  const quota = quotaOf(model, u);
  assert.ok(quota > 0);
  assert.equal(r.summary.quota, quota);
  assert.equal(r.summary.cost_usd, quota / 500_000);
}

// ---- wire helpers ----

/** Sends a golden file's text as it is: SSE blocks (or NDJSON lines) written one by one. */
function sendText(res: http.ServerResponse, contentType: string, body: string, separator?: string) {
  res.writeHead(200, { 'content-type': contentType });
  if (!separator) return void res.end(body);
  const pieces = body.split(separator);
  pieces.forEach((p, i) => res.write(i < pieces.length - 1 ? p + separator : p));
  res.end();
}

/** A Responses SSE text as its events: the `event:` name and the parsed `data:` of each block. */
function sseEvents(body: string): { event: string | null; data: any }[] {
  const out: { event: string | null; data: any }[] = [];
  for (const block of body.split('\n\n')) {
    const lines = block.split('\n');
    const data = lines.find((l) => l.startsWith('data:'));
    if (!data) continue;
    const event = lines.find((l) => l.startsWith('event:'));
    out.push({ event: event ? event.slice(6).trim() : null, data: JSON.parse(data.slice(5)) });
  }
  return out;
}

/** Checks a converted Responses stream is well formed: named events, sequence numbers 0…n in order. */
function responsesEvents(r: RelayReply) {
  assert.equal(r.status, 200, r.text);
  assert.match(r.headers.get('content-type')!, /text\/event-stream/);
  const events = sseEvents(r.text);
  events.forEach((e, i) => {
    assert.equal(e.event, e.data.type, 'the event line names the data type');
    assert.equal(e.data.sequence_number, i);
  });
  return events.map((e) => e.data);
}

const NOW_SLACK = 30;
function assertNow(created: unknown) {
  const now = Math.floor(Date.now() / 1000);
  assert.ok(typeof created === 'number' && Math.abs(created - now) <= NOW_SLACK, `created ${created} is not now`);
}

/** Golden files leave out (Anthropic) or zero (Gemini) `created` and write random ids as `<prefix><generated>`. */
function stable(value: unknown, created: 'drop' | 'zero'): any {
  return JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (key === 'created') {
        assertNow(v);
        return created === 'zero' ? 0 : undefined;
      }
      if (key === 'id' && typeof v === 'string') return v.replace(/^(call_|chatcmpl-)[0-9a-f]{24}$/, '$1<generated>');
      return v;
    }),
  );
}

/** Ollama's answers carry no ids: the relay makes them up; the golden files write chatcmpl-test and call_test_<n>. */
function ollamaIds(items: any[]): any[] {
  let calls = 0;
  const id = items[0]?.id;
  return items.map((item) => {
    assert.match(item.id, /^chatcmpl-[0-9a-f]{24}$/);
    assert.equal(item.id, id, 'one id for the whole stream');
    const copy = structuredClone(item);
    copy.id = 'chatcmpl-test';
    for (const choice of copy.choices) {
      for (const call of (choice.message ?? choice.delta).tool_calls ?? []) {
        assert.match(call.id, /^call_[0-9a-f]{24}$/);
        call.id = `call_test_${calls++}`;
      }
    }
    return copy;
  });
}

const withoutDone = (events: any[]) => {
  assert.equal(events.at(-1), '[DONE]', 'a chat stream ends with [DONE]');
  assert.ok(!events.slice(0, -1).includes('[DONE]'));
  return events.slice(0, -1);
};

/** The streamed tool calls of chat chunks put together, as a client does. */
function assembleToolCalls(events: any[]) {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const e of events) {
    for (const t of e?.choices?.[0]?.delta?.tool_calls ?? []) {
      calls[t.index] ??= { id: '', name: '', arguments: '' };
      if (t.id) calls[t.index].id = t.id;
      if (t.function?.name) calls[t.index].name += t.function.name;
      if (t.function?.arguments) calls[t.index].arguments += t.function.arguments;
    }
  }
  return calls;
}

const finishReasons = (events: any[]) => events.flatMap((e) => (e?.choices ?? []).map((c: any) => c.finish_reason).filter(Boolean));

// ---- the fake upstreams ----

function openaiChat(r: Seen, res: http.ServerResponse) {
  if (r.json?.stream) return sendSse(res, OPENAI_CHUNKS);
  sendJson(res, 200, OPENAI_ANSWER);
}

const NO_USAGE_CHUNKS = [
  { id: 'chatcmpl-quiet', object: 'chat.completion.chunk', created: 1, model: 'quiet-model', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  { id: 'chatcmpl-quiet', object: 'chat.completion.chunk', created: 1, model: 'quiet-model', choices: [{ index: 0, delta: { content: 'Seven blue whales' }, finish_reason: null }] },
  { id: 'chatcmpl-quiet', object: 'chat.completion.chunk', created: 1, model: 'quiet-model', choices: [{ index: 0, delta: { content: ' swam past the lighthouse.' }, finish_reason: null }] },
  { id: 'chatcmpl-quiet', object: 'chat.completion.chunk', created: 1, model: 'quiet-model', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
];

/** Text whose UTF-8 bytes are written in pieces that cut characters in two, as TCP may deliver them. */
const UTF8_TEXT = 'Grüße, 世界! 👋 naïve café';

function splitUtf8Stream(res: http.ServerResponse, lines: string[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const bytes = Buffer.from(lines.join(''), 'utf8');
  const cuts: number[] = [];
  // Cut inside every multi-byte character (after its first byte).
  for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0xc0) cuts.push(i + 1);
  let at = 0;
  const next = () => {
    const end = cuts.shift() ?? bytes.length;
    res.write(bytes.subarray(at, end));
    at = end;
    if (at < bytes.length) setTimeout(next, 3);
    else res.end();
  };
  next();
}

function upstreamRoutes() {
  const ANTHROPIC = {
    answer: text('anthropic', 'messages-response.json'),
    toolAnswer: text('anthropic', 'messages-response-tool-use.json'),
    stream: text('anthropic', 'messages-stream.txt'),
    toolStream: text('anthropic', 'messages-stream-tool-use.txt'),
  };
  const GEMINI = {
    answer: text('gemini', 'response.gemini.json'),
    toolAnswer: text('gemini', 'tool-call-response.gemini.json'),
    stream: text('gemini', 'stream.sse'),
    toolStream: text('gemini', 'stream-tools.sse'),
    embeddings: text('gemini', 'embeddings.gemini-response.json'),
  };
  const hasTools = (r: Seen) => Array.isArray(r.json?.tools) && r.json.tools.length > 0;
  const ndjson = (chunks: unknown[]) => chunks.map((c) => JSON.stringify(c)).join('\n') + '\n';
  return {
    'POST /openai/v1/chat/completions': openaiChat,
    'POST /azure/openai/deployments/prod-gpt4o/chat/completions': openaiChat,
    'POST /openai/v1/responses': (r: Seen, res: http.ServerResponse) =>
      r.json?.stream ? sendText(res, 'text/event-stream', RESPONSES_SSE, '\n\n') : sendText(res, 'application/json', RESPONSES_ANSWER),
    // An OpenAI embeddings answer (the golden result the Ollama converter produces is in OpenAI's format).
    'POST /openai/v1/embeddings': (_r: Seen, res: http.ServerResponse) => sendJson(res, 200, OLLAMA.embeddings.result),

    'POST /anthropic/v1/messages': (r: Seen, res: http.ServerResponse) => {
      if (r.json?.stream) return sendText(res, 'text/event-stream', hasTools(r) ? ANTHROPIC.toolStream : ANTHROPIC.stream, '\n\n');
      sendText(res, 'application/json', hasTools(r) ? ANTHROPIC.toolAnswer : ANTHROPIC.answer);
    },

    [`POST /gemini/v1beta/models/${GEMINI_MODEL}:generateContent`]: (r: Seen, res: http.ServerResponse) =>
      sendText(res, 'application/json', hasTools(r) ? GEMINI.toolAnswer : GEMINI.answer),
    [`POST /gemini/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`]: (r: Seen, res: http.ServerResponse) =>
      sendText(res, 'text/event-stream', hasTools(r) ? GEMINI.toolStream : GEMINI.stream, '\n\n'),
    'POST /gemini/v1beta/models/gemini-embedding-001:batchEmbedContents': (_r: Seen, res: http.ServerResponse) => sendText(res, 'application/json', GEMINI.embeddings),
    // Gemini's stream with its usageMetadata taken out.
    [`POST /gemini-quiet/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`]: (_r: Seen, res: http.ServerResponse) => sendText(res, 'text/event-stream', GEMINI_QUIET_SSE, '\n\n'),

    'POST /ollama/api/chat': (r: Seen, res: http.ServerResponse) => {
      // Tools offered and a user's question last: the model calls a tool; after a tool result it answers.
      const tools = hasTools(r) && r.json.messages.at(-1)?.role === 'user';
      if (r.json?.stream) return sendText(res, 'application/x-ndjson', text('ollama', tools ? 'chat-stream-tools.ndjson' : 'chat-stream.ndjson'), '\n');
      sendJson(res, 200, (tools ? OLLAMA.toolsResponse : OLLAMA.response).ollama);
    },
    'POST /ollama/api/embed': (r: Seen, res: http.ServerResponse) => sendJson(res, 200, (Array.isArray(r.json?.input) ? OLLAMA.embeddingsMultiple : OLLAMA.embeddings).response),

    'POST /quiet/v1/chat/completions': (r: Seen, res: http.ServerResponse) => {
      if (r.json?.stream) return sendSse(res, NO_USAGE_CHUNKS);
      const { usage: _none, ...answer } = OPENAI_ANSWER;
      sendJson(res, 200, { ...answer, model: 'quiet-model' });
    },
    'POST /utf8/v1/chat/completions': (_r: Seen, res: http.ServerResponse) => {
      const piece = (content: string | null, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'chatcmpl-utf8', object: 'chat.completion.chunk', created: 1, model: 'utf8-model', choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
      splitUtf8Stream(res, [piece(UTF8_TEXT.slice(0, 9)), piece(UTF8_TEXT.slice(9)), piece(null, 'stop'), 'data: [DONE]\n\n']);
    },
  };
}

describe('relay formats: every conversion end to end over HTTP [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  const channels: Record<string, number> = {};

  before(async () => {
    up = await startFakeUpstream(upstreamRoutes());
    s = await startGateway(variants()[0]!, { env: { ...RELAY_ENV } });
    root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent(PRICES);
    const add = async (name: string, type: number, base: string, models: string, fields: Record<string, unknown> = {}) => {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name, base_url: `${up.url}${base}`, models, key: KEY, group: 'default', ...fields } });
      assert.equal(r.status, 200, r.text);
      channels[name] = r.json.data.ids[0];
    };
    await add('openai', 1, '/openai', 'gpt-4.1,gpt-4o-mini,text-embedding-3-small');
    await add('azure', 3, '/azure', 'gpt-4o-az', { model_mapping: JSON.stringify({ 'gpt-4o-az': 'prod-gpt4o' }), other: '2024-06-01' });
    await add('anthropic', 14, '/anthropic', 'claude-chat,claude-embed', { model_mapping: JSON.stringify({ 'claude-chat': ANTHROPIC_MODEL }) });
    await add('gemini', 24, '/gemini', 'gemini-chat,gemini-embedding-001', { model_mapping: JSON.stringify({ 'gemini-chat': GEMINI_MODEL }) });
    await add('gemini-quiet', 24, '/gemini-quiet', 'gemini-quiet', { model_mapping: JSON.stringify({ 'gemini-quiet': GEMINI_MODEL }) });
    await add('ollama', 4, '/ollama', 'llama-chat,all-minilm', { model_mapping: JSON.stringify({ 'llama-chat': 'llama3.2' }) });
    await add('quiet', 1, '/quiet', 'quiet-model');
    await add('utf8', 1, '/utf8', 'utf8-model');
  });
  after(() => closeRelayTest(s, up, KEY));
  beforeEach(() => {
    up.seen.length = 0;
  });

  const sent = (pathname: string): Seen => sentOnce(up, pathname);

  // ---- chat callers ----

  test('chat → OpenAI channel: passed through unchanged, whole and streamed, usage and cost from the upstream', async () => {
    const body = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0.7, logit_bias: { '50256': -100 } };
    const r = await relay(s.url, '/chat/completions', body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, JSON.stringify(OPENAI_ANSWER), 'the upstream answer byte for byte');
    const u = OPENAI_ANSWER.usage;
    assertBilled(r, 'gpt-4.1', { prompt: u.prompt_tokens, completion: u.completion_tokens, cached: u.prompt_tokens_details.cached_tokens });
    const req = sent('/openai/v1/chat/completions');
    assert.deepEqual(req.json, { ...body, stream: false }, 'fields the relay does not know reach the upstream');
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);

    up.seen.length = 0;
    const st = await relay(s.url, '/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } });
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(withoutDone(st.events), OPENAI_CHUNKS);
    for (const c of OPENAI_CHUNKS) assert.ok(st.text.includes(`data: ${JSON.stringify(c)}\n\n`), 'each chunk as the upstream wrote it');
    const su = OPENAI_CHUNKS.at(-1).usage;
    assertBilled(st, 'gpt-4o-mini', { prompt: su.prompt_tokens, completion: su.completion_tokens });
    assert.equal(sent('/openai/v1/chat/completions').json.stream_options.include_usage, true);
  });

  test('chat → Azure channel: the deployment URL with api-version, the api-key header; whole and streamed', async () => {
    const r = await relay(s.url, '/chat/completions', { model: 'gpt-4o-az', messages: [{ role: 'user', content: 'Hello!' }] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, OPENAI_ANSWER);
    const u = OPENAI_ANSWER.usage;
    assertBilled(r, 'gpt-4o-az', { prompt: u.prompt_tokens, completion: u.completion_tokens });
    const req = sent('/azure/openai/deployments/prod-gpt4o/chat/completions');
    assert.equal(req.url.search, '?api-version=2024-06-01');
    assert.equal(req.headers['api-key'], KEY);
    assert.equal(req.headers.authorization, undefined);
    assert.equal(req.json.model, 'prod-gpt4o');

    up.seen.length = 0;
    const st = await relay(s.url, '/chat/completions', { model: 'gpt-4o-az', messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    assert.equal(streamedText(st.events), 'Hello there!');
    assert.deepEqual(withoutDone(st.events), OPENAI_CHUNKS.slice(0, -1), 'no usage chunk unless the caller asked for it');
    assert.deepEqual(finishReasons(st.events), ['stop']);
    assertBilled(st, 'gpt-4o-az', { prompt: 9, completion: 3 });
    assert.equal(sent('/azure/openai/deployments/prod-gpt4o/chat/completions').headers['api-key'], KEY);
  });

  test('chat → Anthropic channel: /v1/messages with x-api-key and anthropic-version, system moved, the answer converted', async () => {
    const r = await relay(s.url, '/chat/completions', { ...json('anthropic', 'chat-request.json'), model: 'claude-chat' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(stable(r.json, 'drop'), json('anthropic', 'chat-completion.json'));
    const req = sent('/anthropic/v1/messages');
    assert.deepEqual(req.json, json('anthropic', 'messages-request.json'), 'the system and developer messages became `system`');
    assert.equal(req.headers['x-api-key'], KEY);
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    assert.equal(req.headers.authorization, undefined);
    // Anthropic's input_tokens leave out the cache: 12 + 100 written + 2048 read.
    const u = json('anthropic', 'messages-response.json').usage;
    assertBilled(r, 'claude-chat', { prompt: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens, completion: u.output_tokens, cached: u.cache_read_input_tokens });
  });

  test('chat → Anthropic channel: a tool call round trip (the call out, its result back in)', async () => {
    const first = await relay(s.url, '/chat/completions', { ...json('anthropic', 'chat-request-tools.json'), model: 'claude-chat' });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(sent('/anthropic/v1/messages').json, json('anthropic', 'messages-request-tools.json'));
    assert.deepEqual(stable(first.json, 'drop'), json('anthropic', 'chat-completion-tool-use.json'));
    assertBilled(first, 'claude-chat', { prompt: 384, completion: 92 });

    // The caller runs the tool and sends the assistant turn and the result back.
    up.seen.length = 0;
    const call = first.json.choices[0].message.tool_calls[0];
    const tools = json('anthropic', 'chat-request-tools.json').tools;
    const second = await relay(s.url, '/chat/completions', {
      model: 'claude-chat',
      tools,
      messages: [{ role: 'user', content: 'Weather in SF?' }, first.json.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21 degrees, sunny' }],
    });
    assert.equal(second.status, 200, second.text);
    const back = sent('/anthropic/v1/messages').json.messages;
    assert.deepEqual(back.slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll check the current weather in San Francisco for you." },
          { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA', unit: 'celsius' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '21 degrees, sunny' }] },
    ]);
  });

  test('chat → Anthropic channel streamed: SSE events become chat chunks ending in [DONE], text and tool calls', async () => {
    const st = await relay(s.url, '/chat/completions', { model: 'claude-chat', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } });
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(stable(withoutDone(st.events), 'drop'), json('anthropic', 'chat-chunks.json'));
    const req = sent('/anthropic/v1/messages');
    assert.equal(req.json.stream, true);
    assert.equal(req.json.system, 'Be brief.');
    assert.deepEqual(req.json.messages, [{ role: 'user', content: 'Hello' }]);
    assert.equal(req.headers.accept, 'text/event-stream');
    assertBilled(st, 'claude-chat', { prompt: 25 + 1024, completion: 15, cached: 1024 });

    up.seen.length = 0;
    const tools = await relay(s.url, '/chat/completions', { ...json('anthropic', 'chat-request-tools.json'), model: 'claude-chat', stream: true });
    assert.equal(tools.status, 200, tools.text);
    const expected = json('anthropic', 'chat-chunks-tool-use.json');
    assert.deepEqual(stable(withoutDone(tools.events), 'drop'), expected.slice(0, -1), 'the usage chunk only when asked for');
    assert.equal(streamedText(tools.events), "Okay, let's check the weather for San Francisco, CA:");
    assert.deepEqual(assembleToolCalls(tools.events), [
      { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}' },
      { id: 'toolu_01K3nN2wU1X7q9cGh8bRb5Zz', name: 'get_time', arguments: '{"timezone": "America/Los_Angeles"}' },
    ]);
    assert.deepEqual(finishReasons(tools.events), ['tool_calls']);
    assertBilled(tools, 'claude-chat', { prompt: 472, completion: 89 });
  });

  test('chat → Gemini channel: generateContent with x-goog-api-key (never the key in the URL), the answer converted', async () => {
    const r = await relay(s.url, '/chat/completions', { ...json('gemini', 'chat-request.chat.json'), model: 'gemini-chat' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(stable(r.json, 'zero'), json('gemini', 'response.chat.json'));
    const req = sent(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`);
    assert.deepEqual(req.json, json('gemini', 'chat-request.gemini.json'));
    assert.equal(req.headers['x-goog-api-key'], KEY);
    assert.equal(req.headers.authorization, undefined);
    assert.equal(req.url.search, '', 'no key (or anything else) in the query');
    assertBilled(r, 'gemini-chat', { prompt: 270, completion: 17 });
  });

  test('chat → Gemini channel: tool calls out, function responses back in by name', async () => {
    const first = await relay(s.url, '/chat/completions', { ...json('gemini', 'tools-request.chat.json'), model: 'gemini-chat' });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(sent(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`).json, json('gemini', 'tools-request.gemini.json'));
    assert.deepEqual(stable(first.json, 'zero'), json('gemini', 'tool-call-response.chat.json'));
    const [paris, tokyo] = first.json.choices[0].message.tool_calls;
    assert.notEqual(paris.id, tokyo.id, 'each made-up call id is its own');
    assertBilled(first, 'gemini-chat', { prompt: 96, completion: 38 });

    up.seen.length = 0;
    const second = await relay(s.url, '/chat/completions', {
      model: 'gemini-chat',
      messages: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        first.json.choices[0].message,
        { role: 'tool', tool_call_id: tokyo.id, content: '{"temperature":24}' },
        { role: 'tool', tool_call_id: paris.id, content: 'cloudy' },
      ],
    });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(sent(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`).json.contents.slice(1), [
      {
        role: 'model',
        parts: [{ text: "I'll look up both cities." }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }, { functionCall: { name: 'get_weather', args: { city: 'Tokyo', unit: 'celsius' } } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { content: { temperature: 24 } } } },
          { functionResponse: { name: 'get_weather', response: { content: 'cloudy' } } },
        ],
      },
    ]);
  });

  test('chat → Gemini channel streamed: streamGenerateContent?alt=sse becomes chat chunks, text and tool calls', async () => {
    const st = await relay(s.url, '/chat/completions', { model: 'gemini-chat', messages: [{ role: 'user', content: 'Why is the sky blue?' }], stream: true, stream_options: { include_usage: true } });
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(stable(withoutDone(st.events), 'zero'), json('gemini', 'stream.chunks.json'));
    const req = sent(`/gemini/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`);
    assert.equal(req.url.search, '?alt=sse');
    assert.equal(req.headers['x-goog-api-key'], KEY);
    assert.deepEqual(req.json, { contents: [{ role: 'user', parts: [{ text: 'Why is the sky blue?' }] }] });
    assertBilled(st, 'gemini-chat', { prompt: 9, completion: 13 });

    const tools = await relay(s.url, '/chat/completions', { ...json('gemini', 'tools-request.chat.json'), model: 'gemini-chat', stream: true, stream_options: { include_usage: true } });
    assert.equal(tools.status, 200, tools.text);
    const expected = json('gemini', 'stream-tools.chunks.json').map((c: any) => ({ ...c, model: GEMINI_MODEL }));
    assert.deepEqual(stable(withoutDone(tools.events), 'zero'), expected);
    const calls = assembleToolCalls(tools.events);
    assert.deepEqual(calls.map((c) => [c.name, JSON.parse(c.arguments)]), [['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Tokyo', unit: 'celsius' }]]);
    assert.deepEqual(finishReasons(tools.events), ['tool_calls']);
    // Thoughts are output: 24 candidates + 76 thought tokens.
    assertBilled(tools, 'gemini-chat', { prompt: 64, completion: 100, reasoning: 76 });
  });

  test('chat → Ollama channel: /api/chat whole, and its NDJSON stream as chat chunks', async () => {
    const r = await relay(s.url, '/chat/completions', { ...OLLAMA.request.chat, model: 'llama-chat' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(ollamaIds([r.json]), [OLLAMA.response.chat]);
    const req = sent('/ollama/api/chat');
    assert.deepEqual(req.json, OLLAMA.request.ollama.body);
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    assertBilled(r, 'llama-chat', { prompt: 26, completion: 298 });

    const tools = await relay(s.url, '/chat/completions', { ...OLLAMA.request.chat, model: 'llama-chat', messages: [{ role: 'user', content: 'Weather in Tokyo?' }] });
    assert.deepEqual(ollamaIds([tools.json]), [OLLAMA.toolsResponse.chat]);
    assertBilled(tools, 'llama-chat', { prompt: 169, completion: 18 });

    up.seen.length = 0;
    const st = await relay(s.url, '/chat/completions', { model: 'llama-chat', messages: [{ role: 'user', content: 'Why is the sky blue?' }], stream: true, stream_options: { include_usage: true } });
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(ollamaIds(withoutDone(st.events)), OLLAMA.stream.chunks);
    assert.equal(streamedText(st.events), 'The sky is blue.');
    assert.equal(sent('/ollama/api/chat').json.stream, true);
    assertBilled(st, 'llama-chat', { prompt: 26, completion: 282 });

    const toolStream = await relay(s.url, '/chat/completions', { ...OLLAMA.request.chat, model: 'llama-chat', messages: [{ role: 'user', content: 'Weather in Tokyo and Kyoto?' }], stream: true, stream_options: { include_usage: true } });
    assert.deepEqual(ollamaIds(withoutDone(toolStream.events)), OLLAMA.toolsStream.chunks);
    assert.deepEqual(finishReasons(toolStream.events), ['tool_calls']);
    assertBilled(toolStream, 'llama-chat', { prompt: 169, completion: 30 });
  });

  // ---- Responses callers ----

  test('Responses → OpenAI channel: passed through to /v1/responses, answer and events byte for byte, usage read from them', async () => {
    const r = await relay(s.url, '/responses', RESPONSES_REQUEST);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, RESPONSES_ANSWER);
    const req = sent('/openai/v1/responses');
    assert.deepEqual(req.json, RESPONSES_REQUEST, 'the Responses body itself, not a chat request');
    assert.equal(req.headers.authorization, `Bearer ${KEY}`);
    assert.equal(up.seen.filter((x) => x.path.endsWith('/chat/completions')).length, 0);
    assertBilled(r, 'gpt-4.1', { prompt: 19, completion: 10 });

    up.seen.length = 0;
    const st = await relay(s.url, '/responses', RESPONSES_STREAM_REQUEST);
    assert.equal(st.status, 200, st.text);
    const summaryAt = st.text.indexOf(': relay-summary ');
    assert.ok(summaryAt > 0);
    assert.equal(st.text.slice(0, summaryAt), RESPONSES_SSE, 'the upstream events byte for byte');
    assert.deepEqual(sent('/openai/v1/responses').json, RESPONSES_STREAM_REQUEST);
    // Usage from response.completed: 9 in, 3 out.
    assertBilled(st, 'gpt-4o-mini', { prompt: 9, completion: 3 });
  });

  test('Responses → Anthropic channel: converted through chat into a `response` object', async () => {
    const request = { ...RESPONSES_REQUEST, model: 'claude-chat' };
    const r = await relay(s.url, '/responses', request);
    assert.equal(r.status, 200, r.text);
    const req = sent('/anthropic/v1/messages');
    assert.deepEqual(req.json, { model: ANTHROPIC_MODEL, system: 'You are a helpful assistant.', messages: [{ role: 'user', content: 'Hello!' }], max_tokens: 200, temperature: 0.7, stream: false });
    const res = r.json;
    assert.equal(res.object, 'response');
    assert.equal(res.status, 'completed');
    assert.match(res.id, /^resp_/);
    assertNow(res.created_at);
    assert.equal(res.model, ANTHROPIC_MODEL);
    assert.equal(res.instructions, 'You are a helpful assistant.');
    assert.equal(res.max_output_tokens, 200);
    assert.deepEqual(res.metadata, { session: 's1' });
    assert.equal(res.output.length, 1);
    assert.deepEqual({ ...res.output[0], id: 'msg' }, { type: 'message', id: 'msg', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello! How can I help you today?', annotations: [] }] });
    assert.deepEqual(res.usage, { input_tokens: 2160, input_tokens_details: { cached_tokens: 2048 }, output_tokens: 15, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2175 });
    assertBilled(r, 'claude-chat', { prompt: 2160, completion: 15, cached: 2048 });
  });

  test('Responses → Anthropic channel streamed: response.created … output_text.delta … response.completed with usage', async () => {
    const st = await relay(s.url, '/responses', { model: 'claude-chat', input: 'Say hello', stream: true });
    const events = responsesEvents(st);
    // The same event sequence OpenAI sends for a two-piece text answer (the golden stream of the Responses encoder).
    assert.deepEqual(events.map((e) => e.type), sseEvents(RESPONSES_SSE).map((e) => e.data.type));
    assert.deepEqual(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta), ['Hello', '!']);
    assert.equal(events.find((e) => e.type === 'response.output_text.done').text, 'Hello!');
    const done = events.at(-1);
    assert.equal(done.type, 'response.completed');
    assert.equal(done.response.status, 'completed');
    assert.equal(done.response.id, events[0].response.id);
    assert.equal(done.response.output[0].content[0].text, 'Hello!');
    assert.deepEqual(done.response.usage, { input_tokens: 1049, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 15, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 1064 });
    assert.ok(!st.text.includes('[DONE]'), 'a Responses stream has no [DONE]');
    assert.equal(sent('/anthropic/v1/messages').json.stream, true);
    assertBilled(st, 'claude-chat', { prompt: 1049, completion: 15, cached: 1024 });

    // Tool calls become function_call items.
    const tools = await relay(s.url, '/responses', { model: 'claude-chat', input: 'Weather in SF?', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } }], stream: true });
    const te = responsesEvents(tools);
    const calls = te.filter((e) => e.type === 'response.output_item.done' && e.item.type === 'function_call').map((e) => [e.item.call_id, e.item.name, e.item.arguments, e.item.status]);
    assert.deepEqual(calls, [
      ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'get_weather', '{"location": "San Francisco, CA", "unit": "fahrenheit"}', 'completed'],
      ['toolu_01K3nN2wU1X7q9cGh8bRb5Zz', 'get_time', '{"timezone": "America/Los_Angeles"}', 'completed'],
    ]);
    assert.equal(te.at(-1).type, 'response.completed');
    assert.deepEqual(te.at(-1).response.output.map((o: any) => o.type), ['message', 'function_call', 'function_call']);
  });

  test('Responses → Gemini channel: a `response` with function calls, and the converted event stream', async () => {
    const tool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    const r = await relay(s.url, '/responses', { model: 'gemini-chat', input: 'Weather in Paris and Tokyo?', tools: [tool] });
    assert.equal(r.status, 200, r.text);
    const req = sent(`/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`);
    assert.deepEqual(req.json, { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] }], tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: tool.parameters }] }] });
    assert.equal(req.url.search, '');
    assert.equal(r.json.object, 'response');
    assert.equal(r.json.status, 'completed');
    assert.equal(r.json.id, 'resp_yTDBaK6aB9CFz7IPzemIsAk');
    assert.deepEqual(r.json.output.map((o: any) => o.type), ['message', 'function_call', 'function_call']);
    assert.equal(r.json.output[0].content[0].text, "I'll look up both cities.");
    assert.deepEqual(r.json.output.slice(1).map((o: any) => [o.name, JSON.parse(o.arguments), o.status]), [['get_weather', { city: 'Paris' }, 'completed'], ['get_weather', { city: 'Tokyo', unit: 'celsius' }, 'completed']]);
    for (const o of r.json.output.slice(1)) assert.match(o.call_id, /^call_[0-9a-f]{24}$/);
    assert.deepEqual(r.json.usage, { input_tokens: 96, input_tokens_details: { cached_tokens: 0 }, output_tokens: 38, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 134 });
    assertBilled(r, 'gemini-chat', { prompt: 96, completion: 38 });

    up.seen.length = 0;
    const st = await relay(s.url, '/responses', { model: 'gemini-chat', instructions: 'Be terse.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Why is the sky blue?' }] }], stream: true });
    const events = responsesEvents(st);
    assert.deepEqual(sent(`/gemini/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`).json, { systemInstruction: { parts: [{ text: 'Be terse.' }] }, contents: [{ role: 'user', parts: [{ text: 'Why is the sky blue?' }] }] });
    assert.deepEqual(events.slice(0, 4).map((e) => e.type), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    assert.deepEqual(deltas, ['The', ' sky looks blue because air scatters', ' blue light the most.\n']);
    assert.deepEqual(events.slice(-4).map((e) => e.type), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    assert.equal(events.at(-1).response.id, 'resp_Qb7AaPLvAtyHz7IPkqyJ8AU');
    assert.equal(events.at(-1).response.instructions, 'Be terse.');
    assert.deepEqual(events.at(-1).response.usage, { input_tokens: 9, input_tokens_details: { cached_tokens: 0 }, output_tokens: 13, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 22 });
    assertBilled(st, 'gemini-chat', { prompt: 9, completion: 13 });
  });

  // ---- embeddings ----

  test('embeddings → OpenAI (passed through), Gemini (batchEmbedContents) and Ollama (/api/embed)', async () => {
    const openai = await relay(s.url, '/embeddings', { model: 'text-embedding-3-small', input: 'Why is the sky blue?' });
    assert.equal(openai.status, 200, openai.text);
    assert.equal(openai.text, JSON.stringify(OLLAMA.embeddings.result));
    assert.deepEqual(sent('/openai/v1/embeddings').json, { model: 'text-embedding-3-small', input: 'Why is the sky blue?' });
    assertBilled(openai, 'text-embedding-3-small', { prompt: 8, completion: 0 });

    const gemini = await relay(s.url, '/embeddings', json('gemini', 'embeddings.openai.json'));
    assert.equal(gemini.status, 200, gemini.text);
    assert.deepEqual(gemini.json, json('gemini', 'embeddings.openai-response.json'));
    const req = sent('/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.deepEqual(req.json, json('gemini', 'embeddings.gemini-request.json'));
    assert.equal(req.headers['x-goog-api-key'], KEY);
    assert.equal(req.url.search, '');
    // Gemini reports no tokens for embeddings: counted with the tokenizer.
    const counted = countTokens('What is the meaning of life?') + countTokens('How does a cat purr?');
    assert.deepEqual(gemini.summary.usage, { prompt_tokens: counted, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: counted, counted: true });
    assert.equal(gemini.summary.quota, quotaOf('gemini-embedding-001', { prompt: counted, completion: 0 }));

    const ollama = await relay(s.url, '/embeddings', { ...OLLAMA.embeddings.request });
    assert.equal(ollama.status, 200, ollama.text);
    assert.deepEqual(ollama.json, OLLAMA.embeddings.result);
    assert.deepEqual(sent('/ollama/api/embed').json, OLLAMA.embeddings.call.body);
    assertBilled(ollama, 'all-minilm', { prompt: 8, completion: 0 });
    up.seen.length = 0;
    const many = await relay(s.url, '/embeddings', { ...OLLAMA.embeddingsMultiple.request });
    assert.deepEqual(many.json, OLLAMA.embeddingsMultiple.result);
    assert.deepEqual(sent('/ollama/api/embed').json, OLLAMA.embeddingsMultiple.call.body);
  });

  test('embeddings for a model whose only channel is Anthropic: a clear 400, no upstream call', async () => {
    const r = await relay(s.url, '/embeddings', { model: 'claude-embed', input: 'hello' });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.error.code, 'relay_invalid_request');
    assert.equal(r.json.error.type, 'invalid_request_error');
    assert.match(r.json.error.message, /serves no embeddings/);
    assert.equal(up.seen.length, 0);
  });

  // ---- usage the upstream did not give ----

  test('an upstream that gives no usage: counted with the tokenizer (streamed and whole, OpenAI and Gemini)', async () => {
    const prompt = 'How many whales swam past?';
    // OpenAI's chat framing: 3 tokens to prime the answer, 3 per message.
    const promptTokens = 3 + 3 + countTokens(prompt);
    const st = await relay(s.url, '/chat/completions', { model: 'quiet-model', messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } });
    assert.equal(st.status, 200, st.text);
    assert.equal(streamedText(st.events), 'Seven blue whales swam past the lighthouse.');
    assert.equal(st.summary.usage.counted, true);
    assert.ok(st.summary.usage.prompt_tokens > 0 && st.summary.usage.completion_tokens > 0);
    assert.equal(st.summary.usage.prompt_tokens, promptTokens);
    assert.equal(st.summary.usage.completion_tokens, countTokens('Seven blue whales swam past the lighthouse.'));
    assert.equal(st.summary.quota, quotaOf('quiet-model', { prompt: promptTokens, completion: countTokens('Seven blue whales swam past the lighthouse.') }));

    const whole = await relay(s.url, '/chat/completions', { model: 'quiet-model', messages: [{ role: 'user', content: prompt }] });
    assert.equal(whole.status, 200, whole.text);
    assert.equal(whole.summary.usage.counted, true);
    assert.equal(whole.summary.usage.prompt_tokens, promptTokens);
    assert.equal(whole.summary.usage.completion_tokens, countTokens(OPENAI_ANSWER.choices[0].message.content));

    assert.ok(GEMINI_QUIET_SSE.includes('"candidates"') && !GEMINI_QUIET_SSE.includes('usageMetadata'));
    const gemini = await relay(s.url, '/chat/completions', { model: 'gemini-quiet', messages: [{ role: 'user', content: prompt }], stream: true });
    assert.equal(streamedText(gemini.events), 'The sky looks blue because air scatters blue light the most.\n');
    assert.equal(gemini.summary.usage.counted, true);
    assert.equal(gemini.summary.usage.prompt_tokens, promptTokens);
    assert.equal(gemini.summary.usage.completion_tokens, countTokens('The sky looks blue because air scatters blue light the most.\n'));
  });

  test('a stream whose bytes split multi-byte characters arrives intact', async () => {
    const st = await relay(s.url, '/chat/completions', { model: 'utf8-model', messages: [{ role: 'user', content: 'hi' }], stream: true });
    assert.equal(st.status, 200, st.text);
    assert.equal(streamedText(st.events), UTF8_TEXT);
    assert.ok(!st.text.includes('\uFFFD'));
  });

  // ---- the official SDK as the caller ----

  async function sdk() {
    return new OpenAI({ baseURL: `${s.url}/relay/v1`, apiKey: await relayToken(), maxRetries: 0, timeout: 10_000 });
  }

  const SDK_CASES = [
    { family: 'anthropic', model: 'claude-chat', upstreamPath: '/anthropic/v1/messages', whole: 'Hello! How can I help you today?', streamed: 'Hello!', usage: { prompt: 2160, completion: 15 } },
    { family: 'gemini', model: 'gemini-chat', upstreamPath: `/gemini/v1beta/models/${GEMINI_MODEL}:generateContent`, whole: 'A grey cat is sleeping on a sunny windowsill.', streamed: 'The sky looks blue because air scatters blue light the most.\n', usage: { prompt: 270, completion: 17 } },
  ];

  for (const c of SDK_CASES) {
    test(`openai SDK → ${c.family} channel: chat completions, plain and streamed, text and tool calls`, async () => {
      const client = await sdk();
      const plain = await client.chat.completions.create({ model: c.model, messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hello' }] });
      assert.equal(plain.object, 'chat.completion');
      assert.equal(plain.choices[0].message.content, c.whole);
      assert.equal(plain.choices[0].finish_reason, 'stop');
      assert.equal(plain.usage?.prompt_tokens, c.usage.prompt);
      assert.equal(plain.usage?.completion_tokens, c.usage.completion);
      assert.equal(up.seen.filter((x) => x.path === c.upstreamPath).length, 1, 'served by the converted channel');

      const stream = await client.chat.completions.create({ model: c.model, messages: [{ role: 'user', content: 'Hello' }], stream: true });
      let streamed = '';
      const finishes: string[] = [];
      for await (const chunk of stream) {
        assert.equal(chunk.object, 'chat.completion.chunk');
        streamed += chunk.choices[0]?.delta?.content ?? '';
        if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      }
      assert.equal(streamed, c.streamed);
      assert.deepEqual(finishes, ['stop']);

      // The SDK's own accumulator checks the chunk sequence and puts the tool calls together.
      const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const runner = client.chat.completions.stream({ model: c.model, messages: [{ role: 'user', content: 'Weather?' }], tools, stream_options: { include_usage: true } });
      const final = await runner.finalChatCompletion();
      assert.equal(final.choices[0].finish_reason, 'tool_calls');
      const calls = final.choices[0].message.tool_calls!.map((t) => (t.type === 'function' ? [t.function.name, JSON.parse(t.function.arguments)] : null));
      assert.deepEqual(
        calls,
        c.family === 'anthropic'
          ? [['get_weather', { location: 'San Francisco, CA', unit: 'fahrenheit' }], ['get_time', { timezone: 'America/Los_Angeles' }]]
          : [['get_weather', { city: 'Paris' }], ['get_weather', { city: 'Tokyo', unit: 'celsius' }]],
      );
      assert.ok(final.usage && final.usage.prompt_tokens > 0);
    });

    test(`openai SDK → ${c.family} channel: responses, plain and streamed events`, async () => {
      const client = await sdk();
      const plain = await client.responses.create({ model: c.model, instructions: 'Be kind.', input: 'Hello' });
      assert.equal(plain.object, 'response');
      assert.equal(plain.status, 'completed');
      assert.equal(plain.output_text, c.whole, 'the SDK finds the text in the output items');
      assert.equal(plain.usage?.input_tokens, c.usage.prompt);
      assert.equal(plain.usage?.output_tokens, c.usage.completion);

      const stream = await client.responses.create({ model: c.model, input: 'Hello', stream: true });
      const types: string[] = [];
      let deltas = '';
      let completed: OpenAI.Responses.Response | null = null;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') deltas += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal(deltas, c.streamed);
      assert.ok(completed);
      assert.equal(completed.output_text ?? (completed.output[0] as any).content[0].text, c.streamed);
      assert.ok(completed.usage && completed.usage.input_tokens > 0 && completed.usage.output_tokens > 0);

      // The SDK's Responses stream helper rebuilds the response from the events and refuses a bad sequence.
      const helper = client.responses.stream({ model: c.model, input: 'Hello' });
      const final = await helper.finalResponse();
      assert.equal(final.output_text, c.streamed);
      assert.equal(final.status, 'completed');
    });
  }

  test('openai SDK: embeddings through Gemini and Ollama channels (its default base64 and floats); an Anthropic-only model is a 400', async () => {
    const client = await sdk();
    const expected = json('gemini', 'embeddings.openai-response.json').data.map((d: any) => d.embedding);
    const input = json('gemini', 'embeddings.openai.json').input;
    // The SDK asks for base64 unless told otherwise, and decodes float32 itself.
    const b64 = await client.embeddings.create({ model: 'gemini-embedding-001', input, dimensions: 3 });
    assert.equal(b64.data.length, 2);
    b64.data.forEach((d, i) => assert.deepEqual(d.embedding, expected[i].map(Math.fround)));
    assert.equal(up.seen.filter((x) => x.path === '/gemini/v1beta/models/gemini-embedding-001:batchEmbedContents').length, 1);
    const floats = await client.embeddings.create({ model: 'gemini-embedding-001', input, dimensions: 3, encoding_format: 'float' });
    floats.data.forEach((d, i) => assert.deepEqual(d.embedding, expected[i]));

    const ollama = await client.embeddings.create({ model: 'all-minilm', input: 'Why is the sky blue?' });
    assert.deepEqual(ollama.data[0].embedding, OLLAMA.embeddings.result.data[0].embedding.map(Math.fround));
    assert.equal(ollama.usage.prompt_tokens, 8);

    await assert.rejects(client.embeddings.create({ model: 'claude-embed', input: 'hello' }), (e: any) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.status, 400);
      assert.equal(e.code, 'relay_invalid_request');
      return true;
    });
  });
});
