import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, beforeEach, test } from 'node:test';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay, relayToken } from '../helpers/relay.js';
import { variants } from '../helpers/services.js';
import { promptTokens } from '../../src/gateway/relay/tokens.js';
import { messagesToChat } from '../../src/gateway/relay/formats/anthropic/request.js';
import { generateContentToChat } from '../../src/gateway/relay/formats/gemini/request.js';

/**
 * What Anthropic and Gemini callers send beyond the plain call (GR05, GR06, GR09): Claude Code's system
 * messages, the anthropic-version and anthropic-beta headers, token counts, and streams the caller abandons,
 * billed with the prompt tokens the upstream had already reported. SQLite only: nothing here depends on the
 * database.
 */

const KEY = 'sk-vendor-KEY-0123456789abcdef';
const PRICES = { model_ratio: { 'claude-x': 1, 'claude-slow': 1, 'gpt-x': 1, 'gemini-x': 1, 'gemini-slow': 1 }, completion_ratio: { 'claude-x': 1, 'claude-slow': 1, 'gpt-x': 1, 'gemini-x': 1, 'gemini-slow': 1 } };
/** The prompt counts the fake upstreams report before they stall, and their token counts. */
const ANTHROPIC_PROMPT = 1234;
const GEMINI_PROMPT = 777;
const ANTHROPIC_COUNT = 4242;
const GEMINI_COUNT = 515;

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const MESSAGE = { id: 'msg_v', type: 'message', role: 'assistant', model: 'claude-upstream', content: [{ type: 'text', text: 'Hi!' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 11, output_tokens: 2 } };

function anthropicMessages(r: Seen, res: http.ServerResponse) {
  if (r.json?.model !== 'claude-slow-upstream') return sendJson(res, 200, { ...MESSAGE, model: r.json?.model });
  // message_start names the prompt's tokens, one text delta, then nothing: the caller leaves first.
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(sse('message_start', { type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null, usage: { input_tokens: ANTHROPIC_PROMPT, output_tokens: 1 } } }));
  res.write(sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
  res.write(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } }));
}

function geminiSlowStream(_r: Seen, res: http.ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }] }, index: 0 }], usageMetadata: { promptTokenCount: GEMINI_PROMPT, candidatesTokenCount: 1, totalTokenCount: GEMINI_PROMPT + 1 } })}\n\n`);
}

let up: FakeUpstream;
let s: GatewayServer;

before(async () => {
  up = await startFakeUpstream({
    'POST /anthropic/v1/messages': anthropicMessages,
    'POST /anthropic/v1/messages/count_tokens': (_r, res) => sendJson(res, 200, { input_tokens: ANTHROPIC_COUNT }),
    'POST /openai/v1/chat/completions': (r, res) =>
      sendJson(res, 200, { id: 'c', object: 'chat.completion', created: 1, model: r.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } }),
    'POST /gemini/v1beta/models/gemini-x:countTokens': (_r, res) => sendJson(res, 200, { totalTokens: GEMINI_COUNT }),
    'POST /gemini/v1beta/models/gemini-slow:streamGenerateContent': geminiSlowStream,
  });
  s = await startGateway(variants()[0]!, { env: { ...RELAY_ENV } });
  const root = await s.staff('root', 'root');
  await s.services.ratios.setCurrent(PRICES);
  const add = async (name: string, type: number, models: string, fields: Record<string, unknown> = {}) => {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type, name, base_url: `${up.url}/${name}`, models, key: KEY, group: 'default', ...fields } });
    assert.equal(r.status, 200, r.text);
  };
  await add('anthropic', 14, 'claude-x,claude-slow', { model_mapping: JSON.stringify({ 'claude-x': 'claude-upstream', 'claude-slow': 'claude-slow-upstream' }) });
  await add('openai', 1, 'gpt-x');
  await add('gemini', 24, 'gemini-x,gemini-slow');
});
after(async () => {
  if (s) {
    assert.ok(!s.everything().includes(KEY), 'an upstream key leaked');
    await s.close();
  }
  await up?.close();
});
beforeEach(() => {
  up.seen.length = 0;
});

const CLAUDE_CODE_HEADERS = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' };
const withSystemMessage = (model: string) => ({ model, max_tokens: 64, system: 'You are Claude Code.', messages: [{ role: 'system', content: 'Answer briefly.' }, { role: 'user', content: 'hi' }] });

test('GR05: role "system" messages are folded into system; the anthropic headers and ?beta=true reach an Anthropic channel only', async () => {
  const native = await relay(s.url, '/messages?beta=true', withSystemMessage('claude-x'), { headers: CLAUDE_CODE_HEADERS });
  assert.equal(native.status, 200, native.text);
  assert.equal(native.json.content[0].text, 'Hi!');
  const sent = up.to('/anthropic/v1/messages').at(-1)!;
  assert.equal(sent.json.system, 'You are Claude Code.\n\nAnswer briefly.');
  assert.deepEqual(sent.json.messages, [{ role: 'user', content: 'hi' }]);
  assert.deepEqual([sent.headers['anthropic-version'], sent.headers['anthropic-beta'], sent.url.search], ['2023-06-01', 'claude-code-20250219,interleaved-thinking-2025-05-14', '?beta=true']);
  for (const path of ['/messages', '/messages?beta=false', '/messages?beta=yes']) {
    assert.equal((await relay(s.url, path, withSystemMessage('claude-x'))).status, 200);
    assert.equal(up.to('/anthropic/v1/messages').at(-1)!.url.search, '', `${path}: no query upstream`);
  }

  const converted = await relay(s.url, '/messages?beta=true', withSystemMessage('gpt-x'), { headers: CLAUDE_CODE_HEADERS });
  assert.equal(converted.status, 200, converted.text);
  assert.deepEqual(converted.json.content, [{ type: 'text', text: 'Hi!' }]);
  const chat = up.to('/openai/v1/chat/completions').at(-1)!;
  assert.deepEqual(chat.json.messages, [{ role: 'system', content: 'You are Claude Code.\n\nAnswer briefly.' }, { role: 'user', content: 'hi' }]);
  assert.deepEqual([chat.headers['anthropic-beta'], chat.url.search], [undefined, ''], 'an OpenAI channel gets no Anthropic header nor query');
});

test('GR09: an Anthropic channel counts with its own count_tokens, other channels with the tokenizer; nothing is logged', async () => {
  await s.relay.log.flush();
  const before = await s.ctx.db.selectFrom('relay_log').select('id').execute();
  const body = { model: 'claude-x', system: 'Be brief.', messages: [{ role: 'system', content: 'Folded.' }, { role: 'user', content: 'How many tokens is this?' }] };
  const upstream = await relay(s.url, '/messages/count_tokens?beta=true', body, { headers: CLAUDE_CODE_HEADERS });
  assert.equal(upstream.status, 200, upstream.text);
  assert.deepEqual(upstream.json, { input_tokens: ANTHROPIC_COUNT });
  assert.equal(upstream.headers.get('x-relay-count-source'), 'upstream');
  const sent = up.to('/anthropic/v1/messages/count_tokens').at(-1)!;
  assert.deepEqual([sent.json.model, sent.json.system, sent.json.messages.length, sent.headers['anthropic-beta'], sent.url.search], ['claude-upstream', 'Be brief.\n\nFolded.', 1, CLAUDE_CODE_HEADERS['anthropic-beta'], '?beta=true']);
  assert.equal((await relay(s.url, '/messages/count_tokens', body)).status, 200);
  assert.equal(up.to('/anthropic/v1/messages/count_tokens').at(-1)!.url.search, '', 'no query when the caller sent none');

  const estimated = await relay(s.url, '/messages/count_tokens', { ...body, model: 'gpt-x' });
  assert.equal(estimated.headers.get('x-relay-count-source'), 'tokenizer');
  assert.deepEqual(estimated.json, { input_tokens: promptTokens(messagesToChat(body)) });
  assert.equal(up.to('/openai/v1/chat/completions').length, 0, 'counting calls no model');
  await s.relay.log.flush();
  assert.equal((await s.ctx.db.selectFrom('relay_log').select('id').execute()).length, before.length, 'counts are not relayed calls');

  const refused = await relay(s.url, '/messages/count_tokens', { model: 'claude-x', messages: [] });
  assert.equal(refused.status, 400);
  assert.equal(refused.json.type, 'error', "Anthropic's error shape");
  assert.equal(refused.headers.get('x-relay-error-code'), 'relay_invalid_request');
});

test("GR06 :countTokens: a Gemini channel's own count, else the tokenizer's; a wrong action is refused in Google's shape", async () => {
  const contents = [{ role: 'user', parts: [{ text: 'Count me' }] }];
  const native = await relay(s.url, '/relay/v1beta/models/gemini-x:countTokens', { contents });
  assert.equal(native.status, 200, native.text);
  assert.deepEqual(native.json, { totalTokens: GEMINI_COUNT });
  assert.equal(native.headers.get('x-relay-count-source'), 'upstream');
  const wrapped = await relay(s.url, '/relay/v1beta/models/gpt-x:countTokens', { generateContentRequest: { model: 'models/gpt-x', contents } });
  assert.equal(wrapped.headers.get('x-relay-count-source'), 'tokenizer');
  assert.deepEqual(wrapped.json, { totalTokens: promptTokens(generateContentToChat({ contents }, 'gpt-x', false)) });
  const wrong = await relay(s.url, '/relay/v1beta/models/gemini-x:embedText', { contents });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.json.error.status, 'INVALID_ARGUMENT');
});

/** Starts a streamed call, reads its first bytes, leaves; the relay log row of the call once written. */
async function abandoned(path: string, body: unknown, model: string) {
  const gone = new AbortController();
  const res = await fetch(s.url + path, { method: 'POST', headers: { authorization: `Bearer ${await relayToken()}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: gone.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let seen = '';
  while (!seen.includes('Hello')) seen += new TextDecoder().decode((await reader.read()).value);
  gone.abort();
  for (let i = 0; i < 100; i++) {
    await s.relay.log.flush();
    const row = await s.ctx.db.selectFrom('relay_log').selectAll().where('model', '=', model).orderBy('id', 'desc').executeTakeFirst();
    if (row && Number(row.status) === 499) return row;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the abandoned call was never logged');
}

test('a stream the caller abandons is billed with the prompt tokens the upstream already reported, passed through or converted', async () => {
  const messages = { model: 'claude-slow', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] };
  const cases: [string, string, unknown, string, number][] = [
    ['Anthropic caller, Anthropic channel (message_start)', '/relay/v1/messages', messages, 'claude-slow', ANTHROPIC_PROMPT],
    ['chat caller, Anthropic channel (message_start)', '/relay/v1/chat/completions', { ...messages, max_tokens: undefined }, 'claude-slow', ANTHROPIC_PROMPT],
    ['Gemini caller, Gemini channel (usageMetadata)', '/relay/v1beta/models/gemini-slow:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, 'gemini-slow', GEMINI_PROMPT],
    ['chat caller, Gemini channel (usageMetadata)', '/relay/v1/chat/completions', { model: 'gemini-slow', stream: true, messages: [{ role: 'user', content: 'hi' }] }, 'gemini-slow', GEMINI_PROMPT],
  ];
  for (const [name, path, body, model, prompt] of cases) {
    const row = await abandoned(path, body, model);
    assert.equal(row.error_code, 'client_closed', name);
    assert.equal(Number(row.prompt_tokens), prompt, `${name}: the upstream's prompt count, not the tokenizer's`);
    assert.equal(Number(row.completion_tokens), 1, `${name}: what was streamed`);
    assert.equal(Number(row.quota), prompt + 1, `${name}: billed on those counts`);
    await s.ctx.db.deleteFrom('relay_log').where('id', '=', row.id).execute();
  }
});
