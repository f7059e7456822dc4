import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nativeMessagesReader } from './formats/anthropic/native.js';
import { nativeGenerateContentReader } from './formats/gemini/native.js';
import { nativeResponsesReader } from './formats/responses/native.js';
import { checkedUsage, usageBounds } from './usage.js';
import { costOf } from './pricing.js';
import type { UsageShown } from './formats/shown-usage.js';
import { chatUsage } from '../providers/pivot.js';

const count = { prompt: () => 7, completion: () => 3 };
const sse = (events: unknown[]) => events.flatMap((e) => [`data: ${JSON.stringify(e)}`, '']);

test('checkedUsage: sound counts are kept; wrong ones are counted instead and named', () => {
  const bounds = usageBounds(100);
  const sound = checkedUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 } }, bounds, count);
  assert.deepEqual(sound, { usage: { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 4, reasoning_tokens: 0, total_tokens: 15, counted: false }, rejected: null });
  const cases: [unknown, unknown, Record<string, unknown>][] = [
    ['abc', 5, { prompt_tokens: 'abc' }],
    [10, -1, { completion_tokens: -1 }],
    [10.5, 5, { prompt_tokens: 10.5 }],
    [10, 100 * 2 + 65_537, { completion_tokens: 65_737 }],
    [4_000_001, 5, { prompt_tokens: 4_000_001 }],
    [Number.NaN, null, { prompt_tokens: Number.NaN, completion_tokens: null }],
  ];
  for (const [p, c, rejected] of cases) {
    const r = checkedUsage({ prompt_tokens: p, completion_tokens: c, total_tokens: 0 } as never, bounds, count);
    assert.deepEqual(r.rejected, rejected, `${p}/${c}`);
    assert.equal(r.usage.counted, true);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  }
  // A cached count above the prompt, a negative reasoning count: 0, named, the rest kept.
  const details = checkedUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 11 }, completion_tokens_details: { reasoning_tokens: -2 } }, bounds, count);
  assert.deepEqual([details.usage.cached_tokens, details.usage.reasoning_tokens, details.usage.counted], [0, 0, false]);
  assert.deepEqual(details.rejected, { cached_tokens: 11, reasoning_tokens: -2 });
});

test('checkedUsage of a stream cut short: the upstream\'s prompt kept, the completion at least what its text counts', () => {
  const bounds = usageBounds(100);
  // Anthropic's message_start: the whole prompt, output 1; 3 tokens of text were streamed since.
  const cut = checkedUsage({ prompt_tokens: 1200, completion_tokens: 1, total_tokens: 1201 }, bounds, count, { cut: true });
  assert.deepEqual(cut.usage, { prompt_tokens: 1200, completion_tokens: 3, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 1203, counted: true });
  // The upstream's own later count above the text's is kept as it is.
  assert.deepEqual(checkedUsage({ prompt_tokens: 1200, completion_tokens: 9, total_tokens: 1209 }, bounds, count, { cut: true }).usage.completion_tokens, 9);
  // Reported output without a prompt: nothing the upstream counted for the prompt, everything counted.
  assert.deepEqual(checkedUsage({ prompt_tokens: 0, completion_tokens: 9, total_tokens: 9 }, bounds, count, { cut: true }).usage, { prompt_tokens: 7, completion_tokens: 3, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 10, counted: true });
  // A whole answer's own counts stand.
  assert.equal(checkedUsage({ prompt_tokens: 1200, completion_tokens: 1, total_tokens: 1201 }, bounds, count).usage.completion_tokens, 1);
});

test('costOf never answers NaN or a negative quota, and a served call of a priced model costs at least 1', () => {
  const price = { kind: 'ratio' as const, modelRatio: 0.001, completionRatio: 1, cacheRatio: 1, groupRatio: 1 };
  const usage = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, cached_tokens: 0, reasoning_tokens: 0, total_tokens: p + c, counted: false });
  assert.equal(costOf(price, usage(Number.NaN, 5)).quota, 1);
  assert.equal(costOf(price, usage(10, -1_000_000)).quota, 1, 'a negative completion counts nothing; the prompt still costs');
  assert.equal(costOf(price, usage(0, 0), true).quota, 1);
  assert.equal(costOf({ ...price, modelRatio: 0 }, usage(0, 0), true).quota, 0, 'a free model stays free');
  assert.equal(costOf({ ...price, modelRatio: 1e300 }, usage(1e300, 0)).quota, Number.MAX_SAFE_INTEGER);
});

test('native stream readers hand a wrong count on as NaN (checked and counted), never as a silent 0', () => {
  const anthropic = nativeMessagesReader();
  for (const l of sse([{ type: 'message_start', message: { usage: { input_tokens: 'abc', output_tokens: 1 } } }, { type: 'content_block_delta', delta: { type: 'text_delta', text: 'Hi' } }, { type: 'message_delta', usage: { output_tokens: 5 } }, { type: 'message_stop' }])) anthropic.line(l);
  assert.ok(Number.isNaN(anthropic.usage()!.prompt_tokens));

  const gemini = nativeGenerateContentReader();
  for (const l of sse([{ candidates: [{ content: { parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: '7' } }])) gemini.line(l);
  assert.ok(Number.isNaN(gemini.usage()!.completion_tokens));

  const responses = nativeResponsesReader();
  for (const l of sse([{ type: 'response.output_text.delta', delta: 'Hi' }, { type: 'response.completed', response: { usage: { input_tokens: -3, output_tokens: 2 } } }])) responses.line(l);
  assert.ok(Number.isNaN(responses.usage()!.prompt_tokens));
});

test('native stream readers re-write only the events whose usage is replaced, with the billed counts', () => {
  const billed = chatUsage(7, 3);
  const shown: UsageShown = (u) => (u && Object.values(u).some((v) => typeof v === 'number' && Number.isNaN(v)) ? billed : null);
  const data = (out: string[]) => out.filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
  const pass = (reader: { line(l: string): string }, events: unknown[]) => sse(events).map((l) => reader.line(l));

  const start = { type: 'message_start', message: { id: 'm', usage: { input_tokens: 12, output_tokens: 1 } } };
  const anthropic = pass(nativeMessagesReader(shown), [start, { type: 'content_block_delta', delta: { type: 'text_delta', text: 'Hi' } }, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: -5 } }, { type: 'message_stop' }]);
  assert.equal(anthropic[0], `data: ${JSON.stringify(start)}\n`, 'a sound event goes out as it came');
  assert.deepEqual(data(anthropic)[2].usage, { input_tokens: 7, output_tokens: 3 });
  assert.deepEqual(data(anthropic)[2].delta, { stop_reason: 'end_turn' });

  const gemini = data(pass(nativeGenerateContentReader(shown), [{ candidates: [{ content: { parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 'x', totalTokenCount: 5 } }]));
  assert.deepEqual(gemini[0].usageMetadata, { promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 });

  const responses = data(pass(nativeResponsesReader(shown), [{ type: 'response.output_text.delta', delta: 'Hi' }, { type: 'response.completed', response: { id: 'r', usage: { input_tokens: -3, output_tokens: 2, total_tokens: -1 } } }]));
  assert.equal(responses[1].response.id, 'r');
  assert.deepEqual([responses[1].response.usage.input_tokens, responses[1].response.usage.output_tokens, responses[1].response.usage.total_tokens], [7, 3, 10]);
});
