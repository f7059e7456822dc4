import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { inputTarget, type UpstreamTarget } from '../../upstream/target.js';
import { type ChatBody, type ChatChunk, type EmbeddingsBody } from '../pivot.js';
import { UnsupportedByChannel, UpstreamPayloadError } from '../types.js';
import { geminiRelay } from './relay.js';

/** Golden files written by hand from Google's documented formats, not by running this code. */
const FIXTURES = path.resolve(import.meta.dirname, 'fixtures');
const text = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const json = (name: string) => JSON.parse(text(name));

const target: UpstreamTarget = inputTarget({ type: 24, base_url: 'https://generativelanguage.googleapis.com', key: 'AIzaSy-test-key' });

const JSON_HEADERS = { 'x-goog-api-key': 'AIzaSy-test-key', accept: 'application/json', 'content-type': 'application/json' };

/** The golden files write random ids as `<prefix><generated>` and `created` as 0; the checks on those values are here. */
function stable(value: unknown): unknown {
  const before = Math.floor(Date.now() / 1000) - 5;
  return JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (key === 'created') {
        assert.ok(typeof v === 'number' && v >= before && v <= before + 10, `created ${v} is not now`);
        return 0;
      }
      if (key === 'id' && typeof v === 'string') return v.replace(/^(call_|chatcmpl-)[0-9a-f]{24}$/, '$1<generated>');
      return v;
    }),
  );
}

function decode(sse: string, model: string): ChatChunk[] {
  const decoder = geminiRelay.chatStream(model);
  const chunks = sse.split(/\r?\n/).flatMap((line) => decoder.line(line));
  return [...chunks, ...decoder.end()];
}

test('a chat request becomes a generateContent request with the key in a header', () => {
  const call = geminiRelay.chat(target, json('chat-request.chat.json') as ChatBody, false);
  assert.equal(call.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
  assert.deepEqual(call.headers, JSON_HEADERS);
  assert.deepEqual(call.body, json('chat-request.gemini.json'));
  assert.ok(!call.url.includes(target.key));
});

test('a streamed chat request asks for server-sent events', () => {
  const call = geminiRelay.chat(target, { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'hi' }] }, true);
  assert.equal(call.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  assert.deepEqual(call.body, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
});

test('tool calls and tool results in the history, tools and a forced tool choice', () => {
  const call = geminiRelay.chat(target, json('tools-request.chat.json') as ChatBody, false);
  assert.deepEqual(call.body, json('tools-request.gemini.json'));
});

test('tool_choice modes, max_tokens, json_object and reasoning efforts', () => {
  const configOf = (extra: Record<string, unknown>) =>
    (geminiRelay.chat(target, { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }, false).body as Record<string, unknown>);
  assert.deepEqual(configOf({ tool_choice: 'none' }).toolConfig, { functionCallingConfig: { mode: 'NONE' } });
  assert.deepEqual(configOf({ tool_choice: 'auto' }).toolConfig, { functionCallingConfig: { mode: 'AUTO' } });
  assert.deepEqual(configOf({ tool_choice: 'required' }).toolConfig, { functionCallingConfig: { mode: 'ANY' } });
  assert.deepEqual(configOf({ max_tokens: 50, stop: ['a', 'b'], response_format: { type: 'json_object' } }).generationConfig, {
    maxOutputTokens: 50,
    stopSequences: ['a', 'b'],
    responseMimeType: 'application/json',
  });
  assert.deepEqual(configOf({ reasoning_effort: 'medium' }).generationConfig, { thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
  assert.deepEqual(configOf({ reasoning_effort: 'high' }).generationConfig, { thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
  assert.equal(configOf({ response_format: { type: 'text' } }).generationConfig, undefined);
});

test('a generateContent answer becomes a chat completion, one choice a candidate', () => {
  assert.deepEqual(stable(geminiRelay.chatResult(json('response.gemini.json'), 'gemini-2.0-flash')), json('response.chat.json'));
});

test('function calls in the answer become tool calls with distinct ids', () => {
  const completion = geminiRelay.chatResult(json('tool-call-response.gemini.json'), 'gemini-2.0-flash');
  assert.deepEqual(stable(completion), json('tool-call-response.chat.json'));
  const ids = completion.choices[0].message.tool_calls!.map((c) => c.id);
  assert.equal(new Set(ids).size, 2);
});

test('thought parts become reasoning_content and thoughts count as completion tokens', () => {
  assert.deepEqual(stable(geminiRelay.chatResult(json('thought-response.gemini.json'), 'gemini-2.5-pro')), json('thought-response.chat.json'));
});

test('a blocked prompt becomes an empty, filtered completion', () => {
  assert.deepEqual(stable(geminiRelay.chatResult(json('blocked-response.gemini.json'), 'gemini-2.0-flash')), json('blocked-response.chat.json'));
});

test('an error body throws UpstreamPayloadError with its code as the status', () => {
  assert.throws(
    () => geminiRelay.chatResult(json('error.gemini.json'), 'gemini-2.0-flash'),
    (e: unknown) =>
      e instanceof UpstreamPayloadError &&
      e.message === 'You exceeded your current quota, please check your plan and billing details.' &&
      e.upstreamCode === 'RESOURCE_EXHAUSTED' &&
      e.status === 429,
  );
  assert.throws(
    () => geminiRelay.chatResult({ error: { code: 200, message: 'odd' } }, 'm'),
    (e: unknown) => e instanceof UpstreamPayloadError && e.status === 502 && e.upstreamCode === null,
  );
});

test('a text stream becomes chat chunks ending with one usage chunk', () => {
  const chunks = decode(text('stream.sse'), 'gemini-2.0-flash');
  assert.deepEqual(stable(chunks), json('stream.chunks.json'));
  assert.equal(new Set(chunks.map((c) => c.created)).size, 1);
});

test('a stream with a thought and function calls split over events', () => {
  const chunks = decode(text('stream-tools.sse'), 'gemini-2.5-flash');
  assert.deepEqual(stable(chunks), json('stream-tools.chunks.json'));
  const ids = chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? [])).map((call) => call.id);
  assert.equal(new Set(ids).size, 2);
});

test('end() gives the usage chunk exactly once, null usage when the stream had none', () => {
  const decoder = geminiRelay.chatStream('m');
  assert.deepEqual(decoder.line(''), []);
  assert.deepEqual(decoder.line(': keep-alive'), []);
  const [last] = decoder.end();
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage, null);
  assert.match(last.id, /^chatcmpl-[0-9a-f]{24}$/);
  assert.deepEqual(decoder.end(), []);
});

test('a blocked prompt in a stream ends with a content_filter chunk', () => {
  const decoder = geminiRelay.chatStream('m');
  const chunks = decoder.line('data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 7,"totalTokenCount": 7},"responseId": "blk"}');
  assert.deepEqual(
    chunks.map((c) => c.choices),
    [[{ index: 0, delta: { role: 'assistant' }, finish_reason: null }], [{ index: 0, delta: {}, finish_reason: 'content_filter' }]],
  );
  assert.deepEqual(decoder.end()[0].usage, { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 });
});

test('an error event in a stream throws UpstreamPayloadError', () => {
  const decoder = geminiRelay.chatStream('gemini-2.5-flash');
  const [first, , second] = text('stream-error.sse').split('\n');
  assert.equal(decoder.line(first)[0].choices[0].delta.content, 'Once upon a time');
  assert.throws(
    () => decoder.line(second),
    (e: unknown) => e instanceof UpstreamPayloadError && e.status === 503 && e.upstreamCode === 'UNAVAILABLE' && e.message === 'The model is overloaded. Please try again later.',
  );
  assert.throws(() => geminiRelay.chatStream('m').line('data: {"candidates": ['), UpstreamPayloadError);
});

test('an embeddings request becomes batchEmbedContents', () => {
  const call = geminiRelay.embeddings!(target, json('embeddings.openai.json') as EmbeddingsBody);
  assert.equal(call.url, 'https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
  assert.deepEqual(call.headers, JSON_HEADERS);
  assert.deepEqual(call.body, json('embeddings.gemini-request.json'));
  const single = geminiRelay.embeddings!(target, { model: 'text-embedding-004', input: 'hello' });
  assert.deepEqual(single.body, { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'hello' }] } }] });
});

test('token-array embeddings inputs are refused', () => {
  assert.throws(() => geminiRelay.embeddings!(target, { model: 'm', input: [1, 2, 3] }), UnsupportedByChannel);
  assert.throws(() => geminiRelay.embeddings!(target, { model: 'm', input: [[1, 2], [3]] }), UnsupportedByChannel);
});

test('a batchEmbedContents answer becomes an OpenAI embeddings list', () => {
  assert.deepEqual(geminiRelay.embeddingsResult!(json('embeddings.gemini-response.json'), 'gemini-embedding-001'), json('embeddings.openai-response.json'));
  const withUsage = geminiRelay.embeddingsResult!({ embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 4 } }, 'm');
  assert.deepEqual(withUsage.usage, { prompt_tokens: 4, total_tokens: 4 });
  assert.throws(() => geminiRelay.embeddingsResult!(json('error.gemini.json'), 'm'), UpstreamPayloadError);
});

test('a stream cut before its end reports the usageMetadata of its last event', () => {
  const decoder = geminiRelay.chatStream('m');
  assert.equal(decoder.reported!(), null);
  const [first, , second] = text('stream.sse').split(/\r?\n/);
  decoder.line(first!);
  assert.equal(decoder.reported!()!.prompt_tokens, 9);
  decoder.line(second!);
  assert.deepEqual([decoder.reported!()!.prompt_tokens, decoder.reported!()!.completion_tokens], [9, 8]);
});

test('a countTokens request goes to the model\'s countTokens; a generateContentRequest names the mapped model', () => {
  const plain = geminiRelay.countTokens!.gemini!(target, { contents: [{ parts: [{ text: 'hi' }] }] }, 'mapped');
  assert.equal(plain.url, 'https://generativelanguage.googleapis.com/v1beta/models/mapped:countTokens');
  assert.deepEqual(plain.body, { contents: [{ parts: [{ text: 'hi' }] }] });
  const wrapped = geminiRelay.countTokens!.gemini!(target, { generateContentRequest: { model: 'models/asked', contents: [] } }, 'mapped');
  assert.deepEqual(wrapped.body, { generateContentRequest: { model: 'models/mapped', contents: [] } });
});
