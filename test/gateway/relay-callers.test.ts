import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { sendJson, sendSse, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { relayFixture } from '../helpers/relay-fixtures.js';
import { closeRelayTest, relay, RELAY_ENV, relayToken, type RelayReply } from '../helpers/relay.js';
import { variants } from '../helpers/services.js';

/**
 * The Anthropic Messages (GR05) and Gemini generateContent (GR06) caller formats end to end over HTTP:
 * converted through chat to OpenAI-style, Anthropic and Gemini channels, passed through natively to a
 * channel of their own family, errors before output in the caller's shape, and a stream cut after output
 * ending with the protocol-correct error event of each of the four streamed caller formats (the golden files
 * of src/gateway/relay/formats/<format>/fixtures). The official Anthropic SDK is one of the callers. SQLite only.
 */

const KEY = 'sk-callers-KEY-0123456789abcdef';
const text = relayFixture;
const json = (name: string): any => JSON.parse(text(name));

/** What the relay says when an upstream stream ends without its last event. */
const EOF_MESSAGE = 'the upstream stream ended before its last event';
/** A golden error ending with the message of a stream that ended early. */
const ending = (name: string) => text(name).replaceAll('The upstream stream broke off', EOF_MESSAGE);

const GEMINI_UPSTREAM = 'gemini-2.0-flash';
const PATH_OF = { anthropic: '/relay/v1/messages', gemini: (model: string, stream = false) => `/relay/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}` };

/** The stream text without the relay's closing summary comment. */
const streamText = (r: RelayReply) => r.text.slice(0, r.text.indexOf(': relay-summary '));

function writeText(res: http.ServerResponse, contentType: string, body: string) {
  res.writeHead(200, { 'content-type': contentType });
  res.end(body);
}

/** Chat chunks as an OpenAI stream; without `done` it ends early (no finish, no [DONE]): a cut after output. */
function chunks(res: http.ServerResponse, list: unknown[], done = true) {
  sendSse(res, list, { done });
}

const RESPONSES_CUT = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"err5","type":"message","role":"assistant","content":[],"model":"gpt-4o-mini","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Once upon"}}',
  '',
].join('\n');

function upstreamRoutes() {
  // OpenAI-style channels answering the caller fixtures by the (mapped) model they are asked for.
  const openai = (family: 'caller-anthropic' | 'caller-gemini') => (r: Seen, res: http.ServerResponse) => {
    const kind = r.json?.model === 'deepseek-reasoner' ? 'tools' : 'text';
    if (r.json?.stream) return chunks(res, json(`${family}/${kind}-stream.case.json`).chunks);
    sendJson(res, 200, json(`${family}/${kind}-answer.chat.json`));
  };
  const routes: Record<string, (r: Seen, res: http.ServerResponse) => void> = {
    'POST /oa-anthropic/v1/chat/completions': openai('caller-anthropic'),
    'POST /oa-gemini/v1/chat/completions': openai('caller-gemini'),
    'POST /cut-chat/v1/chat/completions': (_r, res) => chunks(res, json('caller-chat/error-stream.case.json').lines.filter(Boolean).map((l: string) => l.slice(6)), false),
    // An Anthropic channel (a Responses caller is passed through to OpenAI channels): "Once upon", then the end.
    'POST /cut-responses/v1/messages': (_r, res) => writeText(res, 'text/event-stream', RESPONSES_CUT),
    'POST /cut-anthropic/v1/chat/completions': (_r, res) => chunks(res, json('caller-anthropic/error-stream.case.json').chunks, false),
    'POST /cut-gemini/v1/chat/completions': (_r, res) => chunks(res, json('caller-gemini/error-stream.case.json').chunks, false),
    'POST /down/v1/chat/completions': (_r, res) => sendJson(res, 503, { error: { message: 'upstream is down', type: 'server_error' } }),
    'POST /overloaded/v1/messages': (_r, res) => sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    'POST /anthropic/v1/messages': (r, res) =>
      r.json?.stream ? writeText(res, 'text/event-stream', text('anthropic/messages-stream.txt')) : writeText(res, 'application/json', text('anthropic/messages-response.json')),
    // Anthropic's own stream, ending right after the first text delta (inside its event).
    'POST /anthropic-cut/v1/messages': (_r, res) => writeText(res, 'text/event-stream', text('anthropic/messages-stream.txt').split('\n').slice(0, 11).join('\n') + '\n'),
    [`POST /gemini/v1beta/models/${GEMINI_UPSTREAM}:generateContent`]: (_r, res) => writeText(res, 'application/json', text('gemini/response.gemini.json')),
    [`POST /gemini/v1beta/models/${GEMINI_UPSTREAM}:streamGenerateContent`]: (_r, res) => writeText(res, 'text/event-stream', text('gemini/stream.sse')),
    [`POST /gemini-cut/v1beta/models/${GEMINI_UPSTREAM}:streamGenerateContent`]: (_r, res) => writeText(res, 'text/event-stream', text('gemini/stream.sse').split('\n').slice(0, 2).join('\n') + '\n'),
  };
  return routes;
}

const MODELS = ['text-a', 'tools-a', 'text-g', 'tools-g', 'cut-chat', 'cut-responses', 'cut-anthropic', 'cut-gemini', 'down-model', 'claude-overloaded', 'claude-native', 'claude-cut', 'gemini-native', 'gemini-cut', 'flaky', 'nowhere'];

describe('relay callers: Anthropic Messages and Gemini generateContent end to end over HTTP [sqlite]', () => {
  let up: FakeUpstream;
  let s: GatewayServer;

  before(async () => {
    up = await startFakeUpstream(upstreamRoutes());
    s = await startGateway(variants()[0]!, { env: { ...RELAY_ENV } });
    const root = await s.staff('root', 'root');
    await s.services.ratios.setCurrent({ model_ratio: Object.fromEntries(MODELS.map((m) => [m, 1])), completion_ratio: {}, cache_ratio: {} });
    const add = async (type: number, base: string, models: string, mapping: Record<string, string> = {}, fields: Record<string, unknown> = {}) => {
      const channel = { type, name: base.slice(1), base_url: `${up.url}${base}`, models, key: KEY, group: 'default', model_mapping: JSON.stringify(mapping), ...fields };
      const r = await root.post('/api/channel/', { mode: 'single', channel });
      assert.equal(r.status, 200, r.text);
    };
    await add(1, '/oa-anthropic', 'text-a,tools-a,flaky', { 'text-a': 'gpt-4o-mini', 'tools-a': 'deepseek-reasoner', flaky: 'gpt-4o-mini' });
    await add(1, '/oa-gemini', 'text-g,tools-g', { 'text-g': 'gpt-4o-mini', 'tools-g': 'deepseek-reasoner' });
    for (const format of ['chat', 'responses', 'anthropic', 'gemini']) await add(format === 'responses' ? 14 : 1, `/cut-${format}`, `cut-${format}`, { [`cut-${format}`]: 'gpt-4o-mini' });
    await add(1, '/down', 'down-model,flaky', {}, { priority: 10 });
    await add(14, '/overloaded', 'claude-overloaded');
    await add(14, '/anthropic', 'claude-native', { 'claude-native': 'claude-sonnet-4-5' });
    await add(14, '/anthropic-cut', 'claude-cut');
    await add(24, '/gemini', 'gemini-native', { 'gemini-native': GEMINI_UPSTREAM });
    await add(24, '/gemini-cut', 'gemini-cut', { 'gemini-cut': GEMINI_UPSTREAM });
  });
  after(() => closeRelayTest(s, up, KEY));
  beforeEach(() => {
    up.seen.length = 0;
  });

  const messages = (model: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }], ...extra });
  const gemini = { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] };
  const sent = (pathname: string) => {
    const hits = up.seen.filter((x) => x.path === pathname);
    assert.equal(hits.length, 1, `${pathname}: ${up.seen.map((x) => x.path).join(', ')}`);
    return hits[0]!;
  };

  // ---- Anthropic callers ----

  test('Anthropic caller → OpenAI channel: the request converted, the answer a `message` billed from the upstream usage', async () => {
    const r = await relay(s.url, '/messages', messages('text-a', { system: 'Be kind.' }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, json('caller-anthropic/text-answer.message.json'));
    assert.deepEqual(sent('/oa-anthropic/v1/chat/completions').json, { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: 'Hello' }], max_completion_tokens: 256, stream: false });
    assert.equal(r.summary.usage.prompt_tokens, 1117);
    assert.equal(r.summary.usage.cached_tokens, 1024);

    up.seen.length = 0;
    const full = await relay(s.url, '/messages', { ...json('caller-anthropic/request.messages.json'), model: 'tools-a', stream: false });
    assert.equal(full.status, 200, full.text);
    const { stream: _s, stream_options: _o, ...chat } = json('caller-anthropic/request.chat.json');
    assert.deepEqual(sent('/oa-anthropic/v1/chat/completions').json, { ...chat, model: 'deepseek-reasoner', stream: false }, 'the golden pivot, as sent');
    assert.deepEqual(full.json, json('caller-anthropic/tools-answer.message.json'));
  });

  test('Anthropic caller → OpenAI channel streamed: the SSE text of the golden files, byte for byte', async () => {
    for (const [model, golden] of [['text-a', 'text-stream.sse'], ['tools-a', 'tools-stream.sse']]) {
      const r = await relay(s.url, '/messages', messages(model!, { stream: true }));
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers.get('content-type')!, /^text\/event-stream/);
      assert.equal(streamText(r), text(`caller-anthropic/${golden}`));
      assert.equal(r.summary.status, 200);
      assert.equal(r.summary.usage.counted, false);
    }
    assert.deepEqual(up.seen.at(-1)!.json.stream_options, { include_usage: true }, 'the upstream is asked for its usage');
  });

  test('Anthropic caller → Anthropic channel: passed through natively (model mapped), answer and stream as they came, usage read', async () => {
    const body = messages('claude-native', { system: [{ type: 'text', text: 'Be kind.', cache_control: { type: 'ephemeral' } }], service_tier: 'auto' });
    const r = await relay(s.url, '/messages', body);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, text('anthropic/messages-response.json'));
    const req = sent('/anthropic/v1/messages');
    assert.deepEqual(req.json, { ...body, model: 'claude-sonnet-4-5' }, 'every field reaches the upstream');
    assert.equal(req.headers['x-api-key'], KEY);
    // input 12 + cache creation 100 + cache read 2048
    assert.deepEqual([r.summary.usage.prompt_tokens, r.summary.usage.completion_tokens, r.summary.usage.cached_tokens], [2160, 15, 2048]);

    const st = await relay(s.url, '/messages', { ...body, stream: true });
    assert.equal(streamText(st), text('anthropic/messages-stream.txt'));
    assert.deepEqual([st.summary.usage.prompt_tokens, st.summary.usage.completion_tokens], [1049, 15]);
  });

  test('Anthropic caller → Gemini channel and Gemini caller → Anthropic channel: converted both ways', async () => {
    const a = await relay(s.url, '/messages', messages('gemini-native'));
    assert.equal(a.status, 200, a.text);
    assert.equal(a.json.type, 'message');
    assert.deepEqual(a.json.content, [{ type: 'text', text: 'A grey cat is sleeping on a sunny windowsill.' }]);
    assert.equal(sent(`/gemini/v1beta/models/${GEMINI_UPSTREAM}:generateContent`).json.contents[0].parts[0].text, 'Hello');

    const g = await relay(s.url, PATH_OF.gemini('claude-native', true), gemini);
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.events.map((e) => e.candidates[0].content.parts[0].text ?? ''), ['Hello', '!', '']);
    assert.equal(g.events.at(-1).candidates[0].finishReason, 'STOP');
    assert.deepEqual(g.events.at(-1).usageMetadata, { promptTokenCount: 1049, candidatesTokenCount: 15, totalTokenCount: 1064, cachedContentTokenCount: 1024 });
    assert.equal(sent('/anthropic/v1/messages').json.messages[0].content, 'Hello');
  });

  // ---- Gemini callers ----

  test('Gemini caller → OpenAI channel: the model from the path, the request converted, a GenerateContentResponse', async () => {
    const r = await relay(s.url, PATH_OF.gemini('tools-g'), json('caller-gemini/request.gemini.json'));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, json('caller-gemini/tools-answer.gemini.json'));
    const { stream: _s, stream_options: _o, ...chat } = json('caller-gemini/request.chat.json');
    assert.deepEqual(sent('/oa-gemini/v1/chat/completions').json, { ...chat, model: 'deepseek-reasoner', stream: false });
    assert.equal(r.summary.model, 'tools-g');

    for (const [model, golden] of [['text-g', 'text-stream.sse'], ['tools-g', 'tools-stream.sse']]) {
      const st = await relay(s.url, PATH_OF.gemini(model!, true), gemini);
      assert.equal(st.status, 200, st.text);
      assert.equal(streamText(st), text(`caller-gemini/${golden}`));
    }
  });

  test('Gemini caller → Gemini channel: passed through natively to the mapped model, answer and stream as they came', async () => {
    const body = { ...gemini, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] };
    const r = await relay(s.url, PATH_OF.gemini('gemini-native'), body);
    assert.equal(r.text, text('gemini/response.gemini.json'));
    const req = sent(`/gemini/v1beta/models/${GEMINI_UPSTREAM}:generateContent`);
    assert.deepEqual(req.json, body);
    assert.equal(req.headers['x-goog-api-key'], KEY);
    assert.deepEqual([r.summary.usage.prompt_tokens, r.summary.usage.completion_tokens], [270, 17]);

    const st = await relay(s.url, PATH_OF.gemini('gemini-native', true), body);
    assert.equal(streamText(st), text('gemini/stream.sse'));
    assert.equal(sent(`/gemini/v1beta/models/${GEMINI_UPSTREAM}:streamGenerateContent`).url.searchParams.get('alt'), 'sse');
    assert.deepEqual([st.summary.usage.prompt_tokens, st.summary.usage.completion_tokens], [9, 13]);
  });

  // ---- a stream cut after output: each caller format's own ending ----

  const CUT_CASES: { format: string; call: () => Promise<RelayReply>; golden: string }[] = [
    { format: 'OpenAI Chat', call: () => relay(s.url, '/chat/completions', { model: 'cut-chat', messages: [{ role: 'user', content: 'Tell me a story' }], stream: true }), golden: 'caller-chat/error-stream.sse' },
    { format: 'OpenAI Responses', call: () => relay(s.url, '/responses', { model: 'cut-responses', input: 'Tell me a story', stream: true }), golden: 'caller-responses/error-stream.sse' },
    { format: 'Anthropic (converted)', call: () => relay(s.url, '/messages', messages('cut-anthropic', { stream: true })), golden: 'caller-anthropic/error-stream.sse' },
    { format: 'Anthropic (native)', call: () => relay(s.url, '/messages', messages('claude-cut', { stream: true })), golden: 'caller-anthropic/native-cut.sse' },
    { format: 'Gemini (converted)', call: () => relay(s.url, PATH_OF.gemini('cut-gemini', true), gemini), golden: 'caller-gemini/error-stream.sse' },
    { format: 'Gemini (native)', call: () => relay(s.url, PATH_OF.gemini('gemini-cut', true), gemini), golden: 'caller-gemini/native-cut.sse' },
  ];

  for (const c of CUT_CASES) {
    test(`${c.format} caller, stream cut after output: the exact protocol-correct ending, logged as relay_stream_interrupted`, async () => {
      const r = await c.call();
      assert.equal(r.status, 200, r.text);
      // Responses items have random ids and the time of the call; the golden file numbers them and has a fixed time.
      const got = streamText(r).replace(/msg_[0-9a-f]{48}/g, 'msg_1').replace(/"created_at":\d+/g, '"created_at":1741479000');
      assert.equal(got, ending(c.golden));
      assert.equal(r.summary.status, 502);
      assert.equal(r.summary.error_code, 'relay_stream_interrupted');
      assert.equal(up.seen.length, 1, 'nothing retried once output began');
    });
  }

  // ---- errors before output, in the caller's shape ----

  test('errors before output: Anthropic\'s {type: error} and Google\'s {error: {code, status}}, the catalog code in x-relay-error-code', async () => {
    const a = await relay(s.url, '/messages', { model: 'text-a', messages: [] });
    assert.equal(a.status, 400);
    assert.deepEqual(Object.keys(a.json), ['type', 'error', 'request_id']);
    assert.equal(a.json.type, 'error');
    assert.equal(a.json.error.type, 'invalid_request_error');
    assert.equal(a.headers.get('x-relay-error-code'), 'relay_invalid_request');

    const overloaded = await relay(s.url, '/messages', messages('claude-overloaded'));
    assert.equal(overloaded.status, 529);
    assert.deepEqual(overloaded.json.error, { type: 'overloaded_error', message: 'The upstream answered HTTP 529: the upstream is busy; try again later' });
    assert.equal(overloaded.headers.get('x-relay-error-code'), 'relay_upstream_error');

    const unknown = await relay(s.url, '/messages', messages('nowhere'));
    assert.equal(unknown.status, 503);
    assert.equal(unknown.json.error.type, 'api_error');
    assert.equal(unknown.headers.get('x-relay-error-code'), 'relay_no_channel');

    const noToken = await relay(s.url, '/messages', messages('text-a'), { token: null });
    assert.deepEqual([noToken.status, noToken.json.error.type, noToken.headers.get('x-relay-error-code')], [401, 'authentication_error', 'relay_token_missing']);

    const down = await relay(s.url, PATH_OF.gemini('down-model'), gemini);
    assert.equal(down.status, 503);
    assert.deepEqual(Object.keys(down.json.error), ['code', 'message', 'status']);
    assert.deepEqual([down.json.error.code, down.json.error.status], [503, 'UNAVAILABLE']);
    assert.equal(down.headers.get('x-relay-error-code'), 'relay_upstream_error');

    for (const [target, why] of [['text-g:embedContent', /generateContent/], ['text-g', /generateContent/], ['text-g:streamGenerateContent', /alt=sse/]] as const) {
      const bad = await relay(s.url, `/relay/v1beta/models/${target}`, gemini);
      assert.equal(bad.status, 400, target);
      assert.deepEqual([bad.json.error.code, bad.json.error.status], [400, 'INVALID_ARGUMENT']);
      assert.match(bad.json.error.message, why);
    }
    const noContents = await relay(s.url, PATH_OF.gemini('text-g'), { contents: [] });
    assert.deepEqual([noContents.status, noContents.headers.get('x-relay-error-code')], [400, 'relay_invalid_request']);
    const builtIn = await relay(s.url, PATH_OF.gemini('text-g'), { ...gemini, tools: [{ googleSearch: {} }] });
    assert.match(builtIn.json.error.message, /googleSearch/);
    assert.equal(up.seen.filter((x) => x.path.startsWith('/oa-gemini')).length, 0, 'refused before any channel was tried');
  });

  test('failover before output for an Anthropic caller: the failing channel, then the next one answers', async () => {
    const r = await relay(s.url, '/messages', messages('flaky'));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.content[0].text, 'Hello! How can I help you today?');
    assert.deepEqual(r.summary.attempts.map((a: any) => a.status), [503, 200]);
  });

  // ---- the official Anthropic SDK as the caller ----

  test('Anthropic SDK: create, stream with its accumulator (text, thinking, tool_use), usage from message_delta, errors', async () => {
    const client = new Anthropic({ baseURL: `${s.url}/relay`, apiKey: null, authToken: await relayToken(), maxRetries: 0, timeout: 10_000 });
    const plain = await client.messages.create({ model: 'text-a', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] });
    assert.equal(plain.content[0]?.type === 'text' && plain.content[0].text, 'Hello! How can I help you today?');
    assert.deepEqual([plain.stop_reason, plain.usage.input_tokens, plain.usage.output_tokens], ['end_turn', 93, 46]);

    const final = await client.messages.stream({ model: 'tools-a', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
    assert.deepEqual(final.content.map((b) => b.type), ['thinking', 'text', 'tool_use', 'tool_use']);
    assert.deepEqual(final.content.filter((b) => b.type === 'tool_use').map((b) => (b.type === 'tool_use' ? [b.name, b.input] : null)), [['get_weather', { location: 'Paris' }], ['get_time', {}]]);
    assert.equal(final.stop_reason, 'tool_use');
    assert.deepEqual([final.usage.input_tokens, final.usage.cache_read_input_tokens, final.usage.output_tokens], [20, 100, 40], 'the SDK read the whole usage from message_delta');

    const native = await client.messages.stream({ model: 'claude-native', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] }).finalText();
    assert.equal(native, 'Hello!');

    await assert.rejects(client.messages.stream({ model: 'cut-anthropic', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] }).finalMessage(), (e: any) => {
      assert.ok(e instanceof Anthropic.APIError, String(e));
      assert.match(e.message, /ended before its last event/);
      return true;
    });
    await assert.rejects(client.messages.create({ model: 'claude-overloaded', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (e: any) => {
      assert.ok(e instanceof Anthropic.APIError, String(e));
      assert.equal(e.status, 529);
      assert.equal(e.error?.error?.type, 'overloaded_error');
      return true;
    });
  });
});
