import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MODERATION_MODEL } from '../../../../contract/relay.js';
import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { openaiRelay } from '../../../providers/openai/relay.js';
import { UnsupportedByChannel, UpstreamPayloadError } from '../../../providers/types.js';
import { textTokens } from '../../tokens.js';
import { billedUsage } from '../shown-usage.js';
import { checkedUsage, usageBounds } from '../../usage.js';
import { moderations } from './index.js';

/** OpenAI's documented moderation answer. */
const ANSWER = {
  id: 'modr-0d9740456c391e43c445bf0f010940c7',
  model: 'omni-moderation-latest',
  results: [{ flagged: false, categories: { harassment: false, violence: false }, category_scores: { harassment: 0.0001, violence: 0.0002 }, category_applied_input_types: { harassment: ['text'], violence: ['text'] } }],
};

function answer(upstream: unknown, request: Json) {
  const text = JSON.stringify(upstream);
  const usage = (u: ChatUsage | null) => checkedUsage(u, { ...usageBounds(undefined), completion: 0 }, { prompt: () => moderations.promptTokens!(request), completion: () => 0 });
  const passed = (u: ReturnType<typeof usage>) => {
    const billed = billedUsage(u);
    if (!billed) return text;
    moderations.showUsage(upstream as Json, billed);
    return JSON.stringify(upstream);
  };
  return moderations.answer!({ provider: openaiRelay, native: true, upstreamModel: 'm', json: upstream, request, usage, passed });
}

test('the answer passes unchanged; without usage the input is counted', () => {
  const request = { model: 'omni-moderation-latest', input: 'I want to hug a kitten' };
  const a = answer(ANSWER, request);
  assert.equal(a.body, JSON.stringify(ANSWER));
  assert.equal(a.usage.usage.prompt_tokens, textTokens('I want to hug a kitten'));
  assert.equal(a.usage.usage.completion_tokens, 0);
  assert.equal(a.usage.usage.counted, true);
});

test('an upstream that reports usage is billed by it; a wrong count is replaced and shown', () => {
  const a = answer({ ...ANSWER, usage: { prompt_tokens: 12, total_tokens: 12 } }, { input: 'x' });
  assert.equal(a.usage.usage.prompt_tokens, 12);
  assert.equal(a.usage.usage.counted, false);
  const wrong = answer({ ...ANSWER, usage: { prompt_tokens: -4, total_tokens: -4 } }, { input: 'hello' });
  assert.equal(wrong.usage.usage.counted, true);
  assert.deepEqual(JSON.parse(wrong.body).usage, { prompt_tokens: textTokens('hello'), total_tokens: textTokens('hello') });
});

test('multi-modal inputs: the text parts are counted, images nothing', () => {
  const input = [{ type: 'text', text: 'hello there' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }];
  assert.equal(moderations.promptTokens!({ input }), textTokens('hello there\n'));
  assert.equal(moderations.promptTokens!({ input: ['a b', 'c'] }), textTokens('a b\nc'));
});

test("the model defaults to OpenAI's; the input is required; an error body throws; refused where no moderations are served", () => {
  assert.deepEqual(moderations.target({ body: { input: 'x' } }), { model: DEFAULT_MODERATION_MODEL, stream: false });
  assert.equal(moderations.target({ body: { model: 'text-moderation-stable', input: 'x' } }).model, 'text-moderation-stable');
  assert.equal(moderations.missing!({ model: 'm' }), 'input is required');
  assert.equal(moderations.missing!({ model: 'm', input: '' }), 'input is required');
  assert.throws(() => answer({ error: { message: 'quota', code: 'insufficient_quota' } }, { input: 'x' }), (e: unknown) => e instanceof UpstreamPayloadError && e.upstreamCode === 'insufficient_quota');
  assert.throws(() => answer({ id: 'x' }, { input: 'x' }), UpstreamPayloadError);
  assert.throws(() => moderations.toProvider!(openaiRelay, { type: 24 } as never, { input: 'x' }, 'm'), (e: unknown) => e instanceof UnsupportedByChannel && e.callerDetail === 'this model serves no moderations');
  const call = openaiRelay.native.moderations!({ type: 1, baseUrl: 'http://up', key: 'k', organization: '' } as never, { input: 'x' }, 'omni-moderation-latest', false);
  assert.deepEqual([call.url, call.body], ['http://up/v1/moderations', { input: 'x', model: 'omni-moderation-latest' }]);
});
