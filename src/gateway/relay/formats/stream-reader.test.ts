import { test } from 'node:test';
import assert from 'node:assert/strict';
import { relayFixture } from '../../../../test/helpers/relay-fixtures.js';
import { nativeMessagesReader } from './anthropic/native.js';
import { nativeGenerateContentReader } from './gemini/native.js';
import { chatEncoder } from './chat/index.js';
import { pivotReader, readBlock, type StreamReader } from './stream-reader.js';
import { openaiStreamDecoder } from '../../providers/openai/relay.js';
import { UpstreamPayloadError } from '../../providers/types.js';

// Golden files written by hand: the caller-format endings (caller-*/), and the vendors' own streams of
// the anthropic/ and gemini/ providers (the upstream side of a native pass-through).
const text = relayFixture;
const lines = (name: string) => text(name).split('\n');
const CUT = { message: 'The upstream stream broke off', code: 'relay_stream_interrupted' };

/** What a reader writes for `input` lines, then its error ending (after a cut) or its proper end. */
function read(reader: StreamReader, input: string[], cut: boolean): string {
  const out = input.map((line) => reader.line(line)).join('');
  return out + (cut ? reader.fail(CUT.message, CUT.code) : reader.end());
}

test('OpenAI Chat caller: a stream cut after output ends with a data event holding the error object', () => {
  const c = JSON.parse(text('caller-chat/error-stream.case.json')) as { lines: string[] };
  const reader = pivotReader(openaiStreamDecoder(), chatEncoder(false), true);
  assert.equal(read(reader, c.lines, true), text('caller-chat/error-stream.sse'));
  assert.equal(reader.output, true);
  assert.equal(reader.finished, false);
});

test('Anthropic pass-through: the stream as it came, usage from message_start and message_delta', () => {
  const reader = nativeMessagesReader();
  const input = lines('anthropic/messages-stream.txt');
  assert.equal(read(reader, input, false), input.map((l) => l + '\n').join(''));
  assert.equal(reader.finished, true);
  // input_tokens 25 plus 1024 read from the cache; output_tokens from message_delta (cumulative).
  assert.deepEqual(reader.usage(), { prompt_tokens: 1049, completion_tokens: 15, total_tokens: 1064, prompt_tokens_details: { cached_tokens: 1024 } });
  assert.equal(reader.text(), 'Hello!');
});

test('Anthropic pass-through cut inside an event: the event is closed, then Anthropic\'s error event', () => {
  const reader = nativeMessagesReader();
  const input = lines('anthropic/messages-stream.txt').slice(0, 11);
  assert.equal(read(reader, input, true), text('caller-anthropic/native-cut.sse'));
  assert.equal(reader.output, true);
  assert.equal(reader.finished, false);
});

test('Anthropic pass-through: output begins with the first delta; an error event is an upstream failure', () => {
  const reader = nativeMessagesReader();
  const input = lines('anthropic/messages-stream-error.txt');
  for (const line of input.slice(0, 7)) reader.line(line);
  assert.equal(reader.output, false, 'message_start and an empty block are not output: another channel may still serve');
  reader.line(input[7]!);
  assert.equal(reader.output, true);
  const error = input.findIndex((l) => l.includes('overloaded_error'));
  assert.throws(() => reader.line(input[error]!), (e: unknown) => e instanceof UpstreamPayloadError && e.status === 529 && e.upstreamCode === 'overloaded_error');
  assert.throws(() => nativeMessagesReader().line('data: {not json'), UpstreamPayloadError);
});

test('Gemini pass-through: the stream as it came, usage from the last usageMetadata, ended by finishReason', () => {
  const reader = nativeGenerateContentReader();
  const input = lines('gemini/stream.sse');
  assert.equal(read(reader, input, false), input.map((l) => l + '\n').join(''));
  assert.equal(reader.finished, true);
  assert.deepEqual(reader.usage(), { prompt_tokens: 9, completion_tokens: 13, total_tokens: 22 });
  assert.equal(reader.text(), 'The sky looks blue because air scatters blue light the most.\n');
});

test('Gemini pass-through cut after output: Google\'s mid-stream error event; an upstream error event is a failure', () => {
  const cut = nativeGenerateContentReader();
  assert.equal(read(cut, lines('gemini/stream.sse').slice(0, 2), true), text('caller-gemini/native-cut.sse'));
  const failing = nativeGenerateContentReader();
  const input = lines('gemini/stream-error.sse');
  failing.line(input[0]!);
  assert.equal(failing.output, true);
  assert.throws(() => failing.line(input[2]!), (e: unknown) => e instanceof UpstreamPayloadError && e.status === 503);
});

test('a long passed-through chat stream still counts its whole text, read as it goes past the kept bound', () => {
  const reader = pivotReader(openaiStreamDecoder(), chatEncoder(false), true);
  const piece = 'z'.repeat(1000);
  const chunk = (content: string) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}`;
  const input = Array.from({ length: 3000 }, (_, i) => [chunk(`${i % 10}${piece}`), '']).flat();
  read(reader, input, false);
  assert.equal(reader.usage(), null);
  const expected = Array.from({ length: 3000 }, (_, i) => `${i % 10}${piece}`).join('');
  assert.equal(reader.text(), expected);
});

test('OpenAI Chat pass-through: blocks of lines give what the lines give one by one, wherever the reads split them', () => {
  const chunk = (delta: object, finish: string | null = null) => JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [
    `data: ${chunk({ role: 'assistant', content: '' })}`,
    '',
    ...Array.from({ length: 6 }, (_, i) => [`data: ${chunk({ content: `tok${i} ` })}`, '']).flat(),
    ': keep-alive',
    '',
    `data: ${chunk({ content: 'a' })}`,
    `data: ${chunk({ content: 'b' })}`,
    '',
    `data: ${chunk({ content: 'crlf' })}\r`,
    '\r',
    `data: ${chunk({ content: 'mixed' })}\r`,
    '',
    `data: ${chunk({}, 'stop')}`,
    '',
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } })}`,
    '',
    'data: [DONE]',
    '',
  ];
  for (const usage of [true, false]) {
    const lines = usage ? events : events.filter((l) => !l.includes('"usage"'));
    const byLine = pivotReader(openaiStreamDecoder(), chatEncoder(true), true);
    const expected = read(byLine, lines.map((l) => l.replace(/\r$/, '')), false);
    const body = lines.map((l) => `${l}\n`).join('');
    const cuts = [...body.matchAll(/\n/g)].map((m) => m.index! + 1);
    for (const cut of [0, ...cuts]) {
      const reader = pivotReader(openaiStreamDecoder(), chatEncoder(true), true);
      let out = '';
      for (const block of [body.slice(0, cut), body.slice(cut)].filter(Boolean)) {
        const r = readBlock(reader, block);
        assert.equal(r.error, undefined);
        out += r.out;
      }
      assert.equal(out + reader.end(), expected, `split after ${cut} characters`);
      assert.equal(reader.text(), byLine.text());
      assert.deepEqual(reader.usage(), byLine.usage());
      assert.equal(reader.finished, true);
    }
  }
});

test('OpenAI Chat pass-through: an error event inside a block goes out after what came before it', () => {
  const reader = pivotReader(openaiStreamDecoder(), chatEncoder(false), true);
  const content = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] })}`;
  const r = readBlock(reader, `${content}\n\n${content}\n\ndata: {"error":{"message":"boom"}}\n\n`);
  assert.equal(r.out, `${content}\n\n${content}\n\n`);
  assert.ok(r.error instanceof UpstreamPayloadError);
});
