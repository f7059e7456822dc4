import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatChunk, ChatCompletion, Json } from '../../../providers/pivot.js';
import { RelayInputError } from '../types.js';
import { chatToMessages, stopReasonOf } from './answer.js';
import { foldSystemMessages, messagesToChat } from './request.js';
import { messagesStream } from './stream.js';

// The golden files in fixtures/ are written by hand from Anthropic's documented
// Messages formats (requests, `message` objects, the SSE event stream and its error event).
const FIXTURES = new URL('./fixtures/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const json = <T = Json>(name: string) => JSON.parse(text(name)) as T;

/** Equal, and with the keys in the same order (what a caller sees on the wire). */
function assertSameJson(actual: unknown, expected: unknown) {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

function refusal(body: Json, param: string, mentions: string) {
  assert.throws(
    () => messagesToChat(body),
    (e: unknown) => e instanceof RelayInputError && e.param === param && e.message.includes(mentions),
  );
}

const fixedId = () => 'msg_fixed';

test('a multi-turn Messages request (system blocks, images, thinking, tool use and results, tools) becomes the chat body', () => {
  assert.deepEqual(messagesToChat(json('request.messages.json')), json('request.chat.json'));
});

test('plain string content and system, no stream: nothing but the messages and max tokens', () => {
  const chat = messagesToChat({ model: 'claude-haiku-4-5', system: 'Be terse.', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], stream: false });
  assert.deepEqual(chat, { model: 'claude-haiku-4-5', messages: [{ role: 'system', content: 'Be terse.' }, { role: 'user', content: 'Hi' }], max_completion_tokens: 64, stream: false });
});

test('tool choices, thinking budgets and settings chat would refuse without tools', () => {
  const tools = [{ name: 'f', input_schema: { type: 'object', properties: {} } }];
  const base = { model: 'm', messages: [{ role: 'user', content: 'x' }], tools };
  assert.equal(messagesToChat({ ...base, tool_choice: { type: 'any' } }).tool_choice, 'required');
  assert.equal(messagesToChat({ ...base, tool_choice: { type: 'none' } }).tool_choice, 'none');
  assert.deepEqual(messagesToChat({ ...base, tool_choice: { type: 'tool', name: 'f' } }).tool_choice, { type: 'function', function: { name: 'f' } });
  // Without tools: no tool_choice nor parallel_tool_calls (OpenAI refuses them alone).
  const bare = messagesToChat({ model: 'm', messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } });
  assert.equal('tool_choice' in bare, false);
  assert.equal('parallel_tool_calls' in bare, false);
  const effort = (budget: number) => messagesToChat({ ...base, thinking: { type: 'enabled', budget_tokens: budget } }).reasoning_effort;
  assert.deepEqual([effort(1024), effort(4096), effort(10000), effort(16384), effort(31999)], ['low', 'medium', 'medium', 'high', 'high']);
  assert.equal('reasoning_effort' in messagesToChat({ ...base, thinking: { type: 'disabled' } }), false);
});

test('what chat cannot carry is refused with the field named', () => {
  const user = (content: unknown) => ({ model: 'm', messages: [{ role: 'user', content }] });
  refusal({ model: 'm', messages: [] }, 'messages', 'non-empty');
  refusal({ model: 'm', messages: [{ role: 'system', content: 'x' }] }, 'messages', 'non-empty');
  refusal({ model: 'm', messages: [{ role: 'tool', content: 'x' }] }, 'messages', 'tool');
  refusal(user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }]), 'messages', 'document');
  refusal(user([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }]), 'messages', 'file');
  refusal({ ...user('x'), tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools', 'web_search_20250305');
  refusal({ model: 'm', messages: [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }] }, 'messages', 'server_tool_use');
  refusal(user(42), 'messages', 'content');
  refusal({ model: 'm', messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }] }, 'messages', 'no content');
});

test('role "system" entries of messages (Claude Code sends one) are folded into system, in order, blocks kept', () => {
  const folded = foldSystemMessages({ model: 'm', system: 'A', messages: [{ role: 'system', content: 'B' }, { role: 'user', content: 'hi' }, { role: 'system', content: 'C' }] });
  assert.deepEqual(folded, { model: 'm', system: 'A\n\nB\n\nC', messages: [{ role: 'user', content: 'hi' }] });
  const blocks = foldSystemMessages({ model: 'm', system: [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'system', content: 'B' }, { role: 'user', content: 'hi' }] });
  assert.deepEqual(blocks.system, [{ type: 'text', text: 'A', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'B' }]);
  const none = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  assert.equal(foldSystemMessages(none), none, 'a body without them is left as it is');
  const chat = messagesToChat({ model: 'm', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] });
  assert.deepEqual(chat.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }]);
});

test('a text completion becomes a message: msg_ id, end_turn, cache reads apart from input tokens', () => {
  assertSameJson(chatToMessages(json<ChatCompletion>('text-answer.chat.json'), fixedId), json('text-answer.message.json'));
});

test('reasoning and tool calls become thinking and tool_use blocks; the stop reason is tool_use', () => {
  assertSameJson(chatToMessages(json<ChatCompletion>('tools-answer.chat.json'), fixedId), json('tools-answer.message.json'));
});

test('stop reasons: length, tool calls, the content filter, and a turn that called tools but said "stop"', () => {
  assert.equal(stopReasonOf('length', false), 'max_tokens');
  assert.equal(stopReasonOf('tool_calls', true), 'tool_use');
  assert.equal(stopReasonOf('stop', true), 'tool_use');
  assert.equal(stopReasonOf('content_filter', false), 'refusal');
  assert.equal(stopReasonOf('stop', false), 'end_turn');
  assert.equal(stopReasonOf(null, false), 'end_turn');
  const empty: ChatCompletion = { id: '', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] };
  assertSameJson(chatToMessages(empty, fixedId), {
    id: 'msg_fixed', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  });
});

interface StreamCase {
  model: string;
  chunks: ChatChunk[];
  error?: { message: string; code: string };
}

function encode(name: string): string {
  const c = json<StreamCase>(name);
  const encoder = messagesStream(c.model, fixedId);
  const body = c.chunks.map((chunk) => encoder.chunk(chunk)).join('');
  return body + (c.error ? encoder.error(c.error.message, c.error.code) : encoder.end());
}

test('a text stream: message_start, one text block, message_delta with the usage, message_stop', () => {
  assert.equal(encode('text-stream.case.json'), text('text-stream.sse'));
});

test('a stream with thinking, text and two tool calls: one block each, arguments as input_json_delta', () => {
  assert.equal(encode('tools-stream.case.json'), text('tools-stream.sse'));
});

test('a stream cut after output ends with Anthropic\'s error event and nothing after it', () => {
  assert.equal(encode('error-stream.case.json'), text('error-stream.sse'));
  const encoder = messagesStream('m', fixedId);
  encoder.chunk(json<StreamCase>('error-stream.case.json').chunks[1]);
  encoder.error('x', 'relay_stream_interrupted');
  assert.equal(encoder.end(), '');
  assert.equal(encoder.chunk(json<StreamCase>('error-stream.case.json').chunks[1]), '');
});

test('a stream with no chunk at all still makes a whole message', () => {
  const out = messagesStream('m', fixedId).end();
  assert.equal(
    out,
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_fixed","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}\n\n' +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  );
});
