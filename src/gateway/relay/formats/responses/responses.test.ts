import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatChunk, ChatCompletion, Json } from '../../../providers/pivot.js';
import { RelayInputError } from '../types.js';
import { chatToResponse, responsesStreamUsage, responsesUsage, type IdSource } from './answer.js';
import { responsesToChat } from './request.js';
import { responsesStream } from './stream.js';

// The golden files in fixtures/ are written by hand from OpenAI's documented formats.
const FIXTURES = new URL('./fixtures/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const json = <T = Json>(name: string) => JSON.parse(text(name)) as T;

/** msg_1, msg_2, fc_1, … : one counter per prefix. */
function countingIds(): IdSource {
  const counters = new Map<string, number>();
  return (prefix) => {
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return `${prefix}_${n}`;
  };
}

/** Equal, and with the keys in the same order (what a caller sees on the wire). */
function assertSameJson(actual: unknown, expected: unknown) {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

function refusal(body: Json, param: string, mentions: string) {
  assert.throws(
    () => responsesToChat(body),
    (e: unknown) => e instanceof RelayInputError && e.param === param && e.message.includes(mentions),
  );
}

test('a multi-turn request with calls, tools and a JSON schema becomes the chat body', () => {
  assert.deepEqual(responsesToChat(json('multiturn.request.json')), json('multiturn.chat.json'));
});

test('string input, no stream: one user message and nothing else', () => {
  assert.deepEqual(responsesToChat({ model: 'gpt-4.1', input: 'Hi' }), { model: 'gpt-4.1', messages: [{ role: 'user', content: 'Hi' }] });
  assert.deepEqual(responsesToChat({ model: 'gpt-4.1', input: 'Hi', stream: false }).stream, false);
});

test('request settings: named tool choice, json_object, calls without text, settings chat would refuse', () => {
  const chat = responsesToChat({
    model: 'm',
    input: [
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'ok' }] },
    ],
    tools: [{ type: 'function', name: 'f' }],
    tool_choice: { type: 'function', name: 'f' },
    text: { format: { type: 'json_object' } },
    metadata: { a: '1' },
    store: true,
  });
  assert.deepEqual(chat.messages, [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'ok' },
  ]);
  assert.deepEqual(chat.tools, [{ type: 'function', function: { name: 'f' } }]);
  assert.deepEqual(chat.tool_choice, { type: 'function', function: { name: 'f' } });
  assert.deepEqual(chat.response_format, { type: 'json_object' });
  // OpenAI's chat API refuses metadata without store, and parallel_tool_calls without tools.
  assert.equal('metadata' in chat, false);
  assert.equal('store' in chat, false);
  assert.equal('parallel_tool_calls' in responsesToChat({ model: 'm', input: 'x', parallel_tool_calls: false }), false);
});

test('built-in tools and stored state are refused with the field named', () => {
  refusal({ model: 'm', input: 'x', tools: [{ type: 'web_search_preview' }] }, 'tools', 'web_search_preview');
  refusal({ model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] }, 'tools', 'web_search');
  refusal({ model: 'm', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 'tools', 'file_search');
  refusal({ model: 'm', input: 'x', previous_response_id: 'resp_123' }, 'previous_response_id', 'previous_response_id');
  refusal({ model: 'm', input: 'x', conversation: 'conv_123' }, 'conversation', 'conversation');
  refusal({ model: 'm', input: 'x', background: true }, 'background', 'background');
  refusal({ model: 'm', input: 'x', tool_choice: { type: 'web_search_preview' } }, 'tool_choice', 'web_search_preview');
  refusal({ model: 'm', input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input', 'item_reference');
  refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, 'input', 'input_file');
  refusal({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-1' }] }] }, 'input', 'file_id');
});

test('a text completion becomes a response object', () => {
  const { request, completion } = json<{ request: Json; completion: ChatCompletion }>('text-answer.case.json');
  assertSameJson(chatToResponse(completion, request, countingIds()), json('text-answer.response.json'));
});

test('a completion with reasoning and tool calls becomes reasoning, message and function_call items', () => {
  const { request, completion } = json<{ request: Json; completion: ChatCompletion }>('tools-reasoning-answer.case.json');
  assertSameJson(chatToResponse(completion, request, countingIds()), json('tools-reasoning-answer.response.json'));
});

test('an answer cut by length or by the content filter is incomplete', () => {
  const completion = (finish: 'length' | 'content_filter'): ChatCompletion => ({
    id: 'chatcmpl-x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'partial' }, finish_reason: finish }],
  });
  const cut = chatToResponse(completion('length'), {}, countingIds());
  assert.equal(cut.status, 'incomplete');
  assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });
  assert.equal((cut.output as Json[])[0].status, 'incomplete');
  assert.equal(cut.usage, null);
  assert.deepEqual(chatToResponse(completion('content_filter'), {}, countingIds()).incomplete_details, { reason: 'content_filter' });
});

interface StreamCase {
  request: Json;
  model: string;
  chunks: ChatChunk[];
  error?: { message: string; code: string };
}

function encode(name: string): string {
  const c = json<StreamCase>(name);
  const encoder = responsesStream(c.request, c.model, countingIds());
  const body = c.chunks.map((chunk) => encoder.chunk(chunk)).join('');
  return body + (c.error ? encoder.error(c.error.message, c.error.code) : encoder.end());
}

test('a text stream becomes the Responses event stream', () => {
  assert.equal(encode('text-stream.case.json'), text('text-stream.sse'));
});

test('a stream with reasoning and a tool call: the reasoning item closes when the call begins', () => {
  assert.equal(encode('tool-call-stream.case.json'), text('tool-call-stream.sse'));
});

test('a stream cut by length ends with response.incomplete', () => {
  assert.equal(encode('length-stream.case.json'), text('length-stream.sse'));
});

test('an upstream failure after output began: error, then response.failed with the output so far', () => {
  assert.equal(encode('error-stream.case.json'), text('error-stream.sse'));
});

const eventTypes = (sse: string) => [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);

test('stream: text before a tool call is closed first; output indexes follow first appearance', () => {
  const encoder = responsesStream({}, 'm', countingIds());
  const chunk = (delta: ChatChunk['choices'][number]['delta']): ChatChunk => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] });
  let sse = encoder.chunk(chunk({ content: 'Let me look.' }));
  sse += encoder.chunk(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'a', arguments: '{}' } }] }));
  sse += encoder.chunk(chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'b', arguments: '{}' } }] }));
  sse += encoder.end();
  assert.deepEqual(eventTypes(sse), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.completed',
  ]);
  const completed = JSON.parse(sse.trim().split('\n').at(-1)!.slice('data: '.length));
  assert.deepEqual(
    completed.response.output.map((o: Json) => [o.type, o.id]),
    [['message', 'msg_1'], ['function_call', 'fc_1'], ['function_call', 'fc_2']],
  );
  assert.equal(encoder.chunk(chunk({ content: 'late' })), '');
  assert.equal(encoder.end(), '');
});

test('stream: end() with no chunk still sends created, in_progress and completed, numbered from 0', () => {
  const sse = responsesStream({}, 'm').end();
  assert.deepEqual(eventTypes(sse), ['response.created', 'response.in_progress', 'response.completed']);
  const sequence = [...sse.matchAll(/"sequence_number":(\d+)\}$/gm)].map((m) => Number(m[1]));
  assert.deepEqual(sequence, [0, 1, 2]);
  assert.match(sse, /"id":"resp_[0-9a-f]{48}"/);
});

test('usage of a native Responses answer and of its final stream event, in chat form', () => {
  const usage = { input_tokens: 36, input_tokens_details: { cached_tokens: 12 }, output_tokens: 87, output_tokens_details: { reasoning_tokens: 40 }, total_tokens: 123 };
  const chat = { prompt_tokens: 36, completion_tokens: 87, total_tokens: 123, prompt_tokens_details: { cached_tokens: 12 }, completion_tokens_details: { reasoning_tokens: 40 } };
  assert.deepEqual(responsesUsage({ id: 'resp_1', object: 'response', status: 'completed', usage }), chat);
  assert.deepEqual(responsesUsage({ usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 } }), {
    prompt_tokens: 5,
    completion_tokens: 2,
    total_tokens: 7,
  });
  assert.equal(responsesUsage({ id: 'resp_1', usage: null }), null);
  assert.equal(responsesUsage('not an object'), null);
  assert.deepEqual(responsesStreamUsage({ type: 'response.completed', sequence_number: 9, response: { usage } }), chat);
  assert.deepEqual(responsesStreamUsage({ type: 'response.incomplete', response: { usage } }), chat);
  assert.equal(responsesStreamUsage({ type: 'response.in_progress', response: { usage: null } }), null);
  assert.equal(responsesStreamUsage({ type: 'response.output_text.delta', delta: 'x' }), null);
});
