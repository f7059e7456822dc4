import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatChunk, ChatCompletion, Json } from '../../../providers/pivot.js';
import { UnsupportedByChannel, UpstreamPayloadError } from '../../../providers/types.js';
import { chatToCompletion, completionsStream, nativeCompletionAnswer, nativeCompletionsReader } from './answer.js';
import { completions } from './index.js';
import { completionsToChat } from './request.js';

// The golden files in fixtures/ are written by hand from OpenAI's documented formats.
const FIXTURES = new URL('./fixtures/', import.meta.url);
const text = (name: string) => readFileSync(new URL(name, FIXTURES), 'utf8');
const json = <T = Json>(name: string) => JSON.parse(text(name)) as T;

/** The lines of an SSE text as a stream reader gets them (without their newlines). */
const lines = (sse: string) => sse.split('\n').slice(0, -1);

test('one prompt becomes one user message; the settings chat reads the same way pass, the cap defaults to 16', () => {
  const chat = completionsToChat({ model: 'x', prompt: 'Say hi', temperature: 0.2, n: 2, stop: ['\n'], seed: 7, user: 'u', stream: true, stream_options: { include_usage: true } }, 'claude-3');
  assert.deepEqual(chat, { model: 'claude-3', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 16, temperature: 0.2, n: 2, stop: ['\n'], seed: 7, user: 'u', stream_options: { include_usage: true }, stream: true });
  assert.equal(completionsToChat({ model: 'x', prompt: ['only one'], max_tokens: 300 }, 'm').max_tokens, 300);
  assert.deepEqual(completionsToChat({ model: 'x', prompt: ['only one'] }, 'm').messages, [{ role: 'user', content: 'only one' }]);
});

test('what chat cannot carry is refused for the channel (another one may speak completions)', () => {
  const refused = (body: Json, mentions: string) =>
    assert.throws(
      () => completionsToChat({ model: 'x', prompt: 'p', ...body }, 'm'),
      (e: unknown) => e instanceof UnsupportedByChannel && e.callerDetail.includes(mentions) && e.callerDetail.includes('completions'),
    );
  refused({ prompt: ['a', 'b'] }, 'prompt list');
  refused({ prompt: [1, 2, 3] }, 'token prompt');
  refused({ suffix: 'end' }, 'suffix');
  refused({ echo: true }, 'echo');
  refused({ logprobs: 2 }, 'logprobs');
  refused({ best_of: 3 }, 'best_of');
  // Their neutral values are no refusal.
  assert.doesNotThrow(() => completionsToChat({ model: 'x', prompt: 'p', suffix: '', echo: false, logprobs: null, best_of: 1 }, 'm'));
});

test('a chat completion becomes a text_completion: cmpl- id, text, finish reason, usage', () => {
  const { completion } = json<{ completion: ChatCompletion }>('chat-answer.case.json');
  const answer = chatToCompletion(completion);
  assert.deepEqual(answer, json('chat-answer.completion.json'));
  assert.equal(JSON.stringify(answer), JSON.stringify(json('chat-answer.completion.json')), 'the keys in OpenAI\'s order');
  const toolCall = { ...completion, choices: [{ index: 0, message: { role: 'assistant' as const, content: null }, finish_reason: 'tool_calls' as const }], usage: undefined };
  assert.deepEqual((chatToCompletion(toolCall).choices as Json[])[0], { text: '', index: 0, logprobs: null, finish_reason: 'stop' });
  assert.equal('usage' in chatToCompletion(toolCall), false);
});

test('chat chunks become text_completion chunks and [DONE]; the usage chunk only when asked', () => {
  const c = json<{ request: Json; chunks: ChatChunk[] }>('chat-stream.case.json');
  const encode = (includeUsage: boolean) => {
    const encoder = completionsStream(includeUsage);
    return c.chunks.map((chunk) => encoder.chunk(chunk)).join('') + encoder.end();
  };
  assert.equal(encode(true), text('chat-stream.sse'));
  const withoutUsage = encode(false);
  assert.ok(!withoutUsage.includes('"usage"'));
  assert.equal(withoutUsage.split('data: ').length - 1, 4, 'three text chunks and [DONE]: the role chunk and the usage chunk left out');
  assert.match(completionsStream(false).error('upstream failed', 'relay_stream_interrupted'), /^data: \{"error":\{"message":"upstream failed","type":"upstream_error","code":"relay_stream_interrupted"\}\}\n\n$/);
});

test('the format: its cap (16 when unset) and its cap written back, the prompt counted, the error shape OpenAI\'s', () => {
  const output = completions.output!;
  assert.equal(output.max({ prompt: 'p' }), 16);
  assert.equal(output.max({ prompt: 'p', max_tokens: null }), 16);
  assert.equal(output.max({ prompt: 'p', max_tokens: 900 }), 900);
  assert.deepEqual(output.withMax({ prompt: 'p' }, 'm', 40), { prompt: 'p', max_tokens: 40 });
  assert.equal(completions.promptTokens!({ prompt: [[1, 2, 3], [4]] }), 4);
  assert.ok(completions.promptTokens!({ prompt: 'hello world', suffix: ' goodbye' }) > completions.promptTokens!({ prompt: 'hello world' }));
  assert.equal(completions.missing!({ model: 'm' }), 'prompt is required');
  assert.equal(completions.missing!({ model: 'm', prompt: '' }), null);
  assert.ok(completions.relayPath.test('/relay/v1/completions'));
  assert.deepEqual(completions.errorBody({ status: 400, code: 'relay_invalid_request', message: 'no', field: 'prompt', requestId: 'r1' }), {
    error: { message: 'no', type: 'invalid_request_error', code: 'relay_invalid_request', param: 'prompt' },
    requestId: 'r1',
  });
});

test('a native answer: usage and text read, an error body throws', () => {
  assert.deepEqual(nativeCompletionAnswer(json('native-answer.json')), { usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }, text: '\n\nThis is indeed a test' });
  assert.throws(() => nativeCompletionAnswer({ error: { message: 'bad', code: 'x' } }), UpstreamPayloadError);
  assert.throws(() => nativeCompletionAnswer({ object: 'text_completion' }), UpstreamPayloadError);
});

test('a native stream passes chunk by chunk; the usage chunk only when asked; [DONE] once, at the end', () => {
  const sse = text('native-stream.sse');
  const read = (includeUsage: boolean) => {
    const reader = nativeCompletionsReader(undefined, includeUsage);
    const seen: boolean[] = [];
    let out = '';
    for (const line of lines(sse)) {
      out += reader.line(line);
      seen.push(reader.output);
    }
    assert.equal(reader.finished, true);
    assert.equal(seen[0], true, 'output begins with the first text');
    assert.deepEqual(reader.usage(), { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    assert.equal(reader.text(), 'This is a test');
    return out + reader.end();
  };
  assert.equal(read(true), sse, 'passed as it came');
  const quiet = read(false);
  assert.equal(quiet, sse.split('\n\n').filter((e) => !e.includes('"usage":{')).join('\n\n'));
});

test('a native stream: the billed usage replaces one the relay did not believe; an error event throws', () => {
  const reader = nativeCompletionsReader(() => ({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }), true);
  const out = lines(text('native-stream.sse')).map((l) => reader.line(l)).join('');
  assert.match(out, /"usage":\{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8\}/);
  assert.throws(() => nativeCompletionsReader().line('data: {"error":{"message":"overloaded","type":"server_error"}}'), (e: unknown) => e instanceof UpstreamPayloadError && e.message === 'overloaded');
  assert.throws(() => nativeCompletionsReader().line('data: {not json'), UpstreamPayloadError);
  assert.equal(nativeCompletionsReader().line(': keep-alive'), '');
});
