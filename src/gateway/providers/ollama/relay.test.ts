import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { inputTarget, type UpstreamTarget } from '../../upstream/target.js';
import { type ChatBody, type ChatChunk, type ChatCompletion, type EmbeddingsBody, type Json } from '../pivot.js';
import { UpstreamPayloadError } from '../types.js';
import { ollamaRelay } from './relay.js';

const FIXTURES = path.resolve(import.meta.dirname, 'fixtures');
const fixtureText = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const fixture = <T = Json>(name: string): T => JSON.parse(fixtureText(name));

const target = (key = ''): UpstreamTarget => inputTarget({ type: 4, base_url: 'http://localhost:11434', key });

const chatBody = (overrides: Json = {}): ChatBody => ({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], ...overrides });
const requestBody = (body: ChatBody, stream = false) => ollamaRelay.chat(target(), body, stream).body as Json;

const CHAT_ID = /^chatcmpl-[0-9a-f]{24}$/;
const CALL_ID = /^call_[0-9a-f]{24}$/;

/** Made-up ids are random: checks their form, then puts the fixtures' placeholders in their place. */
function withTestIds<T extends ChatCompletion | ChatChunk>(items: T[]): T[] {
  const id = items[0]?.id;
  let calls = 0;
  return items.map((item) => {
    assert.match(item.id, CHAT_ID);
    assert.equal(item.id, id);
    const copy = structuredClone(item);
    copy.id = 'chatcmpl-test';
    for (const choice of copy.choices) {
      const toolCalls = 'message' in choice ? choice.message.tool_calls : choice.delta.tool_calls;
      for (const call of toolCalls ?? []) {
        assert.match(String(call.id), CALL_ID);
        call.id = `call_test_${calls++}`;
      }
    }
    return copy;
  });
}

/** Feeds an NDJSON text line by line and returns every chunk, stopping at the first error it throws. */
function decode(name: string, model: string): { chunks: ChatChunk[]; error: unknown } {
  const decoder = ollamaRelay.chatStream(model);
  const chunks: ChatChunk[] = [];
  try {
    for (const line of fixtureText(name).split('\n')) chunks.push(...decoder.line(line));
    chunks.push(...decoder.end());
    return { chunks, error: null };
  } catch (error) {
    return { chunks, error };
  }
}

for (const name of ['chat-request.json', 'chat-request-structured.json']) {
  test(`ollama: ${name} becomes the documented /api/chat request`, () => {
    const golden = fixture<{ stream: boolean; key?: string; chat: ChatBody; ollama: Json }>(name);
    const call = ollamaRelay.chat(target(golden.key), golden.chat, golden.stream);
    assert.deepEqual(call, golden.ollama);
  });
}

test('ollama: stream is always sent, since Ollama streams when it is left out', () => {
  assert.equal(requestBody(chatBody(), false).stream, false);
  assert.equal(requestBody(chatBody({ stream: true }), true).stream, true);
  assert.deepEqual(requestBody(chatBody()), { model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: false });
});

test('ollama: JSON mode, reasoning effort and tool results without a known call', () => {
  const body = requestBody(
    chatBody({
      response_format: { type: 'json_object' },
      reasoning_effort: 'none',
      messages: [{ role: 'tool', tool_call_id: 'call_unknown', content: [{ type: 'text', text: '42' }] }],
    }),
  );
  assert.equal(body.format, 'json');
  assert.equal(body.think, false);
  assert.deepEqual(body.messages, [{ role: 'tool', content: '42' }]);
  assert.equal(requestBody(chatBody({ response_format: { type: 'text' } })).format, undefined);
  assert.equal(requestBody(chatBody({ reasoning_effort: 'high' })).think, true);
});

test('ollama: max_completion_tokens is used when max_tokens is absent', () => {
  assert.deepEqual(requestBody(chatBody({ max_completion_tokens: 32 })).options, { num_predict: 32 });
});

for (const name of ['chat-response.json', 'chat-response-tools.json', 'chat-response-thinking.json']) {
  test(`ollama: ${name} becomes a chat completion`, () => {
    const golden = fixture<{ model: string; ollama: Json; chat: ChatCompletion }>(name);
    const [completion] = withTestIds([ollamaRelay.chatResult(golden.ollama, golden.model)]);
    assert.deepEqual(completion, golden.chat);
  });
}

test('ollama: a cut-off answer finishes with length; an id Ollama gives a tool call is kept', () => {
  const completion = ollamaRelay.chatResult(
    {
      created_at: 'not a time',
      message: { role: 'assistant', content: '', tool_calls: [{ id: 'call_k7x2m9qp', function: { index: 0, name: 'get_weather', arguments: {} } }] },
      done_reason: 'length',
      done: true,
    },
    'llama3.2',
  );
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.deepEqual(completion.choices[0].message.tool_calls, [{ id: 'call_k7x2m9qp', type: 'function', function: { name: 'get_weather', arguments: '{}' } }]);
  assert.ok(Math.abs(completion.created - Date.now() / 1000) < 60);
  assert.deepEqual(completion.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
});

test('ollama: an error body is an UpstreamPayloadError', () => {
  assert.throws(
    () => ollamaRelay.chatResult({ error: 'model "llama9" not found, try pulling it first' }, 'llama9'),
    (error: unknown) => error instanceof UpstreamPayloadError && error.message === 'model "llama9" not found, try pulling it first' && error.status === 502 && error.upstreamCode === null,
  );
  assert.throws(() => ollamaRelay.chatResult('oops', 'llama3.2'), UpstreamPayloadError);
});

for (const name of ['chat-stream', 'chat-stream-tools', 'chat-stream-thinking']) {
  test(`ollama: ${name}.ndjson becomes chat chunks`, () => {
    const golden = fixture<{ model: string; chunks: ChatChunk[] }>(`${name}.json`);
    const { chunks, error } = decode(`${name}.ndjson`, golden.model);
    assert.equal(error, null);
    assert.deepEqual(withTestIds(chunks), golden.chunks);
  });
}

test('ollama: an error line in the stream throws an UpstreamPayloadError', () => {
  const golden = fixture<{ model: string; chunks: ChatChunk[]; error: { message: string; upstreamCode: null; status: number } }>('chat-stream-error.json');
  const { chunks, error } = decode('chat-stream-error.ndjson', golden.model);
  assert.deepEqual(withTestIds(chunks), golden.chunks);
  assert.ok(error instanceof UpstreamPayloadError);
  assert.deepEqual({ message: error.message, upstreamCode: error.upstreamCode, status: error.status }, golden.error);
});

test('ollama: a stream cut off before done ends without a finish; lines after done are ignored', () => {
  const decoder = ollamaRelay.chatStream('llama3.2');
  assert.equal(decoder.line('{"created_at":"2025-07-07T20:22:19Z","message":{"role":"assistant","content":"Hi"},"done":false}').length, 1);
  assert.deepEqual(decoder.end(), []);

  const finished = ollamaRelay.chatStream('llama3.2');
  const chunks = finished.line('{"message":{"role":"assistant","content":"Hi"},"done":true,"done_reason":"length","prompt_eval_count":3,"eval_count":1}');
  assert.deepEqual(
    chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason, c.usage]),
    [
      [{ role: 'assistant', content: 'Hi' }, null, undefined],
      [{}, 'length', undefined],
      [undefined, undefined, { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }],
    ],
  );
  assert.deepEqual(finished.line('{"error":"late"}'), []);
  assert.throws(() => ollamaRelay.chatStream('llama3.2').line('{"message":'), UpstreamPayloadError);
});

for (const name of ['embeddings.json', 'embeddings-multiple.json']) {
  test(`ollama: ${name} maps to /api/embed and back`, () => {
    const golden = fixture<{ model: string; request: EmbeddingsBody; call: Json; response: Json; result: Json }>(name);
    assert.deepEqual(ollamaRelay.embeddings!(target(), golden.request), golden.call);
    assert.deepEqual(ollamaRelay.embeddingsResult!(golden.response, golden.model), golden.result);
  });
}

test('ollama: token arrays cannot be embedded; an error body throws', () => {
  for (const input of [[1, 2, 3], [[1, 2], [3]]]) {
    assert.throws(() => ollamaRelay.embeddings!(target(), { model: 'all-minilm', input }), { name: 'UnsupportedByChannel', message: 'token arrays are not supported by this upstream' });
  }
  assert.throws(() => ollamaRelay.embeddingsResult!({ error: 'model "nomic" not found' }, 'nomic'), UpstreamPayloadError);
  assert.throws(() => ollamaRelay.embeddingsResult!({ model: 'nomic' }, 'nomic'), UpstreamPayloadError);
});
