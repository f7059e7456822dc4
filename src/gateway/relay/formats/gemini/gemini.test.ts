import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatChunk, ChatCompletion, Json } from '../../../providers/pivot.js';
import { RelayInputError } from '../types.js';
import { chatToGenerateContent } from './answer.js';
import { generateContentToChat, jsonSchemaOf } from './request.js';
import { generateContentStream } from './stream.js';

// The golden files in fixtures/ are written by hand from Google's documented
// generateContent formats (GenerateContentRequest, GenerateContentResponse, the alt=sse stream, its error).
const FIXTURES = new URL('./fixtures/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const json = <T = Json>(name: string) => JSON.parse(text(name)) as T;

function assertSameJson(actual: unknown, expected: unknown) {
  assert.deepEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

function refusal(body: Json, param: string, mentions: string) {
  assert.throws(
    () => generateContentToChat(body, 'm', false),
    (e: unknown) => e instanceof RelayInputError && e.param === param && e.message.includes(mentions),
  );
}

test('a multi-turn request (system, inline and file data, thoughts, calls and responses, tools, config) becomes the chat body', () => {
  assert.deepEqual(generateContentToChat(json('request.gemini.json'), 'gemini-2.5-flash', true), json('request.chat.json'));
});

test('the smallest request: one user text; the model comes from the path', () => {
  assert.deepEqual(generateContentToChat({ contents: [{ parts: [{ text: 'Hi' }] }] }, 'gemini-2.0-flash', false), { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'Hi' }] });
});

test('calls without ids: each result finds its call by name, in order; ids the caller gave are kept', () => {
  const chat = generateContentToChat(
    {
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and London, and the time?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }, { functionCall: { name: 'weather', args: { city: 'London' } } }, { functionCall: { id: 't-1', name: 'time', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 't-1', name: 'time', response: { now: '12:00' } } }, { functionResponse: { name: 'weather', response: { c: 15 } } }, { functionResponse: { name: 'weather', response: { c: 12 } } }] },
      ],
    },
    'm',
    false,
  );
  assert.deepEqual(chat.messages[1].tool_calls?.map((c) => c.id), ['call_0', 'call_1', 't-1']);
  assert.deepEqual(chat.messages.slice(2).map((m) => [m.role, m.tool_call_id, m.content]), [
    ['tool', 't-1', '{"now":"12:00"}'],
    ['tool', 'call_0', '{"c":15}'],
    ['tool', 'call_1', '{"c":12}'],
  ]);
});

test('tool configs, JSON output and thinking settings', () => {
  const base = { contents: [{ parts: [{ text: 'x' }] }], tools: [{ functionDeclarations: [{ name: 'f' }] }] };
  const mode = (m: string, allowed?: string[]) => generateContentToChat({ ...base, toolConfig: { functionCallingConfig: { mode: m, allowedFunctionNames: allowed } } }, 'm', false).tool_choice;
  assert.deepEqual([mode('AUTO'), mode('ANY'), mode('NONE'), mode('VALIDATED'), mode('ANY', ['a', 'b'])], ['auto', 'required', 'none', 'auto', 'required']);
  const config = (generationConfig: Json) => generateContentToChat({ contents: [{ parts: [{ text: 'x' }] }], generationConfig }, 'm', false);
  assert.deepEqual(config({ responseMimeType: 'application/json' }).response_format, { type: 'json_object' });
  assert.deepEqual(config({ responseMimeType: 'application/json', responseSchema: { type: 'ARRAY', items: { type: 'STRING' } } }).response_format, {
    type: 'json_schema',
    json_schema: { name: 'response', schema: { type: 'array', items: { type: 'string' } } },
  });
  assert.equal(config({ thinkingConfig: { thinkingBudget: 0 } }).reasoning_effort, undefined);
  assert.equal(config({ thinkingConfig: { thinkingBudget: -1 } }).reasoning_effort, undefined);
  assert.equal(config({ thinkingConfig: { thinkingBudget: 1024 } }).reasoning_effort, 'low');
  assert.equal(config({ thinkingConfig: { thinkingBudget: 24576 } }).reasoning_effort, 'high');
  assert.equal(config({ thinkingConfig: { thinkingLevel: 'high' } }).reasoning_effort, 'high');
  assert.deepEqual(jsonSchemaOf({ type: 'INTEGER', nullable: true }), { type: ['integer', 'null'] });
});

test('what chat cannot carry is refused with the field named', () => {
  refusal({ contents: [] }, 'contents', 'non-empty');
  refusal({ contents: [{ role: 'system', parts: [{ text: 'x' }] }] }, 'contents', 'system');
  refusal({ contents: [{ parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }] }, 'contents', 'executableCode');
  refusal({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] }, 'tools', 'googleSearch');
  refusal({ contents: [{ parts: [{ text: 'x' }] }], tools: [{ codeExecution: {} }] }, 'tools', 'codeExecution');
  refusal({ contents: [{ parts: [{ text: 'x' }] }], cachedContent: 'cachedContents/abc' }, 'cachedContent', 'cachedContent');
});

test('a completion with two choices becomes two candidates with their finish reasons and the usage', () => {
  assertSameJson(chatToGenerateContent(json<ChatCompletion>('text-answer.chat.json')), json('text-answer.gemini.json'));
});

test('reasoning and tool calls become a thought part and a functionCall; thoughts counted apart from candidates', () => {
  assertSameJson(chatToGenerateContent(json<ChatCompletion>('tools-answer.chat.json')), json('tools-answer.gemini.json'));
});

interface StreamCase {
  model: string;
  chunks: ChatChunk[];
  error?: { message: string; code: string };
}

function encode(name: string): string {
  const c = json<StreamCase>(name);
  const encoder = generateContentStream(c.model);
  const body = c.chunks.map((chunk) => encoder.chunk(chunk)).join('');
  return body + (c.error ? encoder.error(c.error.message, c.error.code) : encoder.end());
}

test('a text stream: one event per piece of text, the last with finishReason and usageMetadata', () => {
  assert.equal(encode('text-stream.case.json'), text('text-stream.sse'));
});

test('a stream with thoughts and a call: thought parts as they come, the call whole in the last event', () => {
  assert.equal(encode('tools-stream.case.json'), text('tools-stream.sse'));
});

test('a stream cut after output ends with the error event Google sends mid-stream, and nothing after it', () => {
  assert.equal(encode('error-stream.case.json'), text('error-stream.sse'));
  const encoder = generateContentStream('m');
  encoder.error('x', 'relay_stream_interrupted');
  assert.equal(encoder.end(), '');
});

test('contents with nothing chat can carry are refused', () => {
  refusal({ contents: [{ role: 'user', parts: [{}] }] }, 'contents', 'no text');
  refusal({ contents: [{ role: 'model', parts: [{ text: 'thinking', thought: true }] }] }, 'contents', 'no text');
});
