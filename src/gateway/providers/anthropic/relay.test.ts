import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { inputTarget, type UpstreamTarget } from '../../upstream/target.js';
import { type ChatBody, type ChatChunk, type Json } from '../pivot.js';
import { UpstreamPayloadError } from '../types.js';
import { anthropicRelay } from './relay.js';

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures');
const fixtureText = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const fixture = <T = Json>(name: string): T => JSON.parse(fixtureText(name));

const MODEL = 'claude-sonnet-4-5';

const target: UpstreamTarget = inputTarget({ type: 14, base_url: 'https://api.anthropic.com', key: 'sk-ant-test' });

const chatBody = (overrides: Json = {}): ChatBody => ({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...overrides });
const requestBody = (body: ChatBody, stream = false) => anthropicRelay.chat(target, body, stream).body as Json;

/** Feeds an SSE text line by line (line ends removed) and returns every chunk; checks id and created are shared. */
function decode(text: string, collected: ChatChunk[] = []): Json[] {
  const decoder = anthropicRelay.chatStream(MODEL);
  for (const line of text.split('\n')) collected.push(...decoder.line(line));
  collected.push(...decoder.end());
  return withoutCreated(collected);
}

function withoutCreated(chunks: ChatChunk[]): Json[] {
  for (const c of chunks) {
    assert.equal(typeof c.created, 'number');
    assert.equal(c.created, chunks[0].created);
  }
  return chunks.map(({ created: _created, ...rest }) => rest);
}

test('anthropic: a chat request becomes a Messages request', () => {
  const call = anthropicRelay.chat(target, fixture<ChatBody>('chat-request.json'), false);
  assert.equal(call.url, 'https://api.anthropic.com/v1/messages');
  assert.deepEqual(call.headers, {
    'x-api-key': 'sk-ant-test',
    'anthropic-version': '2023-06-01',
    accept: 'application/json',
    'content-type': 'application/json',
  });
  assert.deepEqual(call.body, fixture('messages-request.json'));
});

test('anthropic: a streamed request asks for SSE', () => {
  const call = anthropicRelay.chat(target, fixture<ChatBody>('chat-request.json'), true);
  assert.equal(call.headers.accept, 'text/event-stream');
  assert.deepEqual(call.body, { ...fixture('messages-request.json'), stream: true });
});

test('anthropic: tools, assistant tool calls and tool results', () => {
  assert.deepEqual(requestBody(fixture<ChatBody>('chat-request-tools.json')), fixture('messages-request-tools.json'));
});

test('anthropic: reasoning_effort enables thinking and raises max_tokens above the budget', () => {
  assert.deepEqual(requestBody(fixture<ChatBody>('chat-request-thinking.json'), true), fixture('messages-request-thinking.json'));
  const roomy = requestBody(chatBody({ reasoning_effort: 'low', max_tokens: 8000 }));
  assert.deepEqual(roomy.thinking, { type: 'enabled', budget_tokens: 1024 });
  assert.equal(roomy.max_tokens, 8000);
  assert.equal(requestBody(chatBody({ reasoning_effort: 'medium' })).max_tokens, 8192);
  assert.equal(requestBody(chatBody({ reasoning_effort: 'none' })).thinking, undefined);
});

test('anthropic: max_tokens defaults to 4096', () => {
  assert.equal(requestBody(chatBody()).max_tokens, 4096);
  assert.equal(requestBody(chatBody({ max_tokens: 300, max_completion_tokens: 900 })).max_tokens, 300);
});

test('anthropic: tool_choice mapping', () => {
  const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  const choice = (overrides: Json) => requestBody(chatBody({ tools, ...overrides })).tool_choice;
  assert.deepEqual(choice({ tool_choice: 'auto' }), { type: 'auto' });
  assert.deepEqual(choice({ tool_choice: 'none' }), { type: 'none' });
  assert.deepEqual(choice({ tool_choice: 'required' }), { type: 'any' });
  assert.deepEqual(choice({ tool_choice: { type: 'function', function: { name: 'f' } } }), { type: 'tool', name: 'f' });
  assert.deepEqual(choice({ parallel_tool_calls: false }), { type: 'auto', disable_parallel_tool_use: true });
  assert.equal(choice({}), undefined);
  // Anthropic rejects tool_choice without tools.
  assert.equal(requestBody(chatBody({ tool_choice: 'required', parallel_tool_calls: false })).tool_choice, undefined);
});

test('anthropic: consecutive same-role messages merge and empty ones are dropped', () => {
  const body = requestBody(
    chatBody({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: [{ type: 'text', text: 'd' }] },
      ],
    }),
  );
  assert.equal(body.system, undefined);
  assert.deepEqual(body.messages, [
    { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'text', text: 'd' }] },
  ]);
});

test('anthropic: a Messages answer becomes a chat completion', () => {
  const completion = anthropicRelay.chatResult(fixture('messages-response.json'), MODEL);
  const { created, ...rest } = completion;
  assert.equal(typeof created, 'number');
  assert.deepEqual(rest, fixture('chat-completion.json'));
});

test('anthropic: tool_use and thinking answers', () => {
  const { created: _a, ...toolUse } = anthropicRelay.chatResult(fixture('messages-response-tool-use.json'), MODEL);
  assert.deepEqual(toolUse, fixture('chat-completion-tool-use.json'));
  const { created: _b, ...thinking } = anthropicRelay.chatResult(fixture('messages-response-thinking.json'), MODEL);
  assert.deepEqual(thinking, fixture('chat-completion-thinking.json'));
});

test('anthropic: an answer with only tool calls has null content', () => {
  const completion = anthropicRelay.chatResult(
    { id: 'msg_1', type: 'message', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 2 } },
    MODEL,
  );
  assert.equal(completion.choices[0].message.content, null);
  assert.equal(completion.choices[0].message.tool_calls?.[0].function.arguments, '{}');
});

test('anthropic: stop reasons', () => {
  const reason = (stop_reason: string) => anthropicRelay.chatResult({ id: 'msg_1', content: [], stop_reason }, MODEL).choices[0].finish_reason;
  assert.equal(reason('end_turn'), 'stop');
  assert.equal(reason('stop_sequence'), 'stop');
  assert.equal(reason('max_tokens'), 'length');
  assert.equal(reason('tool_use'), 'tool_calls');
  assert.equal(reason('refusal'), 'content_filter');
});

test('anthropic: error bodies throw UpstreamPayloadError with a status', () => {
  const thrown = (body: unknown) => {
    try {
      anthropicRelay.chatResult(body, MODEL);
    } catch (err) {
      assert.ok(err instanceof UpstreamPayloadError);
      return { message: err.message, code: err.upstreamCode, status: err.status };
    }
    assert.fail('expected an UpstreamPayloadError');
  };
  assert.deepEqual(thrown(fixture('messages-error.json')), { message: 'Overloaded', code: 'overloaded_error', status: 529 });
  assert.deepEqual(thrown({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }), { message: 'slow down', code: 'rate_limit_error', status: 429 });
  assert.deepEqual(thrown({ error: { type: 'api_error', message: 'Internal server error' } }), { message: 'Internal server error', code: 'api_error', status: 502 });
  assert.equal(thrown('not an object').status, 502);
});

test('anthropic: a text stream', () => {
  assert.deepEqual(decode(fixtureText('messages-stream.txt')), fixture('chat-chunks.json'));
});

test('anthropic: a streamed tool_use with input_json_delta', () => {
  assert.deepEqual(decode(fixtureText('messages-stream-tool-use.txt')), fixture('chat-chunks-tool-use.json'));
});

test('anthropic: a streamed thinking block', () => {
  assert.deepEqual(decode(fixtureText('messages-stream-thinking.txt')), fixture('chat-chunks-thinking.json'));
});

test('anthropic: an error event throws after the chunks already produced', () => {
  const collected: ChatChunk[] = [];
  assert.throws(
    () => decode(fixtureText('messages-stream-error.txt'), collected),
    (err) => err instanceof UpstreamPayloadError && err.status === 529 && err.upstreamCode === 'overloaded_error' && err.message === 'Overloaded',
  );
  assert.deepEqual(withoutCreated(collected), fixture('chat-chunks-error.json'));
});

test('anthropic: comments, blank lines and pings produce nothing', () => {
  const decoder = anthropicRelay.chatStream(MODEL);
  for (const line of [': keep-alive', '', 'event: ping', 'data: {"type": "ping"}', 'data:']) assert.deepEqual(decoder.line(line), []);
  assert.deepEqual(decoder.end(), []);
});

test('anthropic: end() closes a stream that stopped after message_delta', () => {
  const full = fixtureText('messages-stream.txt');
  const truncated = full.slice(0, full.indexOf('event: message_stop'));
  assert.deepEqual(decode(truncated), fixture('chat-chunks.json'));
  // Without message_delta there is nothing to close.
  const early = full.slice(0, full.indexOf('event: message_delta'));
  assert.deepEqual(decode(early), (fixture<Json[]>('chat-chunks.json')).slice(0, 3));
});

test('anthropic: a stream cut before its end reports the usage of message_start (the prompt counted by the upstream)', () => {
  const decoder = anthropicRelay.chatStream(MODEL);
  assert.equal(decoder.reported!(), null, 'nothing before message_start');
  const full = fixtureText('messages-stream.txt');
  for (const line of full.slice(0, full.indexOf('event: content_block_delta')).split('\n')) decoder.line(line);
  // input 25 + cache read 1024 + cache creation 0 (OpenAI's prompt_tokens include the cached part).
  assert.deepEqual(decoder.reported!(), { prompt_tokens: 1049, completion_tokens: 1, total_tokens: 1050, prompt_tokens_details: { cached_tokens: 1024 } });
});

test('anthropic: native calls and token counts send the caller\'s anthropic-version, anthropic-beta and ?beta=true', () => {
  const vendor = { vendorHeaders: { 'anthropic-version': '2024-01-01', 'anthropic-beta': 'claude-code-20250219' }, betaQuery: true };
  const call = anthropicRelay.native.anthropic!(target, { model: 'x', max_tokens: 5, messages: [] }, 'mapped', true, vendor);
  assert.equal(call.url, 'https://api.anthropic.com/v1/messages?beta=true');
  assert.deepEqual([call.headers['anthropic-version'], call.headers['anthropic-beta'], call.headers['x-api-key'], call.headers.accept, (call.body as Json).model], ['2024-01-01', 'claude-code-20250219', 'sk-ant-test', 'text/event-stream', 'mapped']);
  const plain = anthropicRelay.native.anthropic!(target, { model: 'x' }, 'x', false);
  assert.equal(plain.url, 'https://api.anthropic.com/v1/messages');
  assert.deepEqual([plain.headers['anthropic-version'], plain.headers['anthropic-beta'], plain.headers.accept], ['2023-06-01', undefined, 'application/json']);
  assert.equal(anthropicRelay.native.anthropic!(target, { model: 'x' }, 'x', false, { betaQuery: false }).url, 'https://api.anthropic.com/v1/messages');
  const count = anthropicRelay.countTokens!.anthropic!(target, { model: 'x', messages: [] }, 'mapped', vendor);
  assert.equal(count.url, 'https://api.anthropic.com/v1/messages/count_tokens?beta=true');
  assert.deepEqual([count.headers['anthropic-beta'], (count.body as Json).model], ['claude-code-20250219', 'mapped']);
  assert.equal(anthropicRelay.countTokens!.anthropic!(target, { model: 'x', messages: [] }, 'mapped').url, 'https://api.anthropic.com/v1/messages/count_tokens');
  // A converted call (OpenAI's chat to this channel) carries nothing of an Anthropic caller's.
  assert.equal(anthropicRelay.chat(target, { model: 'x', messages: [{ role: 'user', content: 'hi' }] }, false).url, 'https://api.anthropic.com/v1/messages');
});
