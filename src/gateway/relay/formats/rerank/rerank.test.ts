import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { openaiRelay } from '../../../providers/openai/relay.js';
import { UnsupportedByChannel, UpstreamPayloadError } from '../../../providers/types.js';
import { textTokens } from '../../tokens.js';
import { checkedUsage, usageBounds } from '../../usage.js';
import { rerank } from './index.js';

// The golden files in fixtures/ are written by hand from each vendor's documented rerank answer.
const FIXTURES = new URL('./fixtures/', import.meta.url);
const json = <T = Json>(name: string) => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as T;
const REQUEST = json<Json & { documents: unknown[]; query: string }>('request.json');

/** The format's answer to an upstream's, with the relay's usage check (the prompt counted when none came). */
function answer(upstream: unknown, request: Json = REQUEST) {
  const usage = (u: ChatUsage | null) => checkedUsage(u, { ...usageBounds(undefined), completion: 0 }, { prompt: () => rerank.promptTokens!(request), completion: () => 0 });
  const a = rerank.answer!({ provider: openaiRelay, native: true, upstreamModel: 'm', json: upstream, request, usage, passed: () => 'unused' });
  return { body: JSON.parse(a.body), usage: a.usage };
}

test("Jina's answer: results and usage in Jina's shape, the model and other fields left out", () => {
  const a = answer(json('jina-answer.json'));
  assert.deepEqual(a.body, json('expected.json'));
  assert.equal(a.usage.usage.prompt_tokens, 38);
  assert.equal(a.usage.usage.counted, false);
});

test('Cohere, SiliconFlow and Xinference answers read into the same shape with their own usage fields', () => {
  const cohere = answer(json('cohere-answer.json'));
  assert.deepEqual(cohere.body.usage, { prompt_tokens: 41, total_tokens: 41 });
  // No documents in Cohere's answer, but the caller asked for them: the request's, as Jina writes them.
  assert.deepEqual(cohere.body.results[0], { index: 0, relevance_score: 0.9990564, document: { text: REQUEST.documents[0] } });
  assert.deepEqual(cohere.body.results[1].document, { text: 'Bio-Hautpflege für empfindliche Haut mit Aloe Vera und Kamille' });
  const silicon = answer(json('siliconflow-answer.json'));
  assert.deepEqual(silicon.body.usage, { prompt_tokens: 44, total_tokens: 44 }, 'meta.tokens, not the zero billed_units');
  assert.deepEqual(silicon.body.results.map((r: Json) => r.index), [0, 2]);
  // Xinference reports no usage: the documents and the query are counted.
  const xinference = answer(json('xinference-answer.json'));
  const counted = textTokens([...REQUEST.documents.map((d) => (typeof d === 'string' ? d : (d as Json).text)), REQUEST.query].join('\n'));
  assert.deepEqual(xinference.body.usage, { prompt_tokens: counted, total_tokens: counted });
  assert.equal(xinference.usage.usage.counted, true);
  assert.deepEqual(xinference.body.results[1].document, { text: 'Bio-Hautpflege für empfindliche Haut mit Aloe Vera und Kamille' });
});

test('documents: none when the caller said so, the upstream\'s when it sent them unasked, none when neither', () => {
  const noDocuments = { ...REQUEST, return_documents: false };
  assert.deepEqual(answer(json('jina-answer.json'), noDocuments).body.results, [
    { index: 0, relevance_score: 0.8783142566680908 },
    { index: 2, relevance_score: 0.7407503724098206 },
  ]);
  const unset: Json = { ...REQUEST };
  delete unset.return_documents;
  assert.ok(answer(json('jina-answer.json'), unset).body.results[0].document, "Jina's default sends them");
  assert.equal('document' in answer(json('xinference-answer.json'), unset).body.results[0], false);
});

test('an error body or a body without results throws (another channel is tried)', () => {
  assert.throws(() => answer({ error: { message: 'model not found', type: 'invalid_request_error' } }), (e: unknown) => e instanceof UpstreamPayloadError && e.message === 'model not found');
  assert.throws(() => answer({ data: [] }), UpstreamPayloadError);
  assert.throws(() => answer({ results: [{ index: 'a', relevance_score: 1 }] }), UpstreamPayloadError);
});

test('the format: what it requires, no output cap, refused on a channel without rerank', () => {
  assert.equal(rerank.missing!({ model: 'm', documents: ['a'] }), 'query is required');
  assert.equal(rerank.missing!({ model: 'm', query: 'q', documents: [] }), 'documents must be a non-empty list');
  assert.equal(rerank.missing!({ model: 'm', query: 'q', documents: ['a'] }), null);
  assert.equal(rerank.output, undefined);
  assert.equal(rerank.target({ body: { model: 'r', stream: true } }).stream, false);
  assert.throws(() => rerank.toProvider!(openaiRelay, { type: 14 } as never, REQUEST, 'm'), (e: unknown) => e instanceof UnsupportedByChannel && e.callerDetail === 'this model serves no rerank');
  // Moonshot's adaptor in the reference sends no rerank: refused for that channel, before any request.
  assert.throws(() => openaiRelay.native.rerank!({ type: 25, baseUrl: 'http://x' } as never, REQUEST, 'm', false), UnsupportedByChannel);
  assert.equal(openaiRelay.native.rerank!({ type: 40, baseUrl: 'http://sf', key: 'k', organization: '' } as never, REQUEST, 'bge', false).url, 'http://sf/v1/rerank');
});
