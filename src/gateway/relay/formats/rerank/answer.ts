import { listOf, objectOf } from '../../../../kit/json/object.js';
import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { payloadError } from '../../../providers/openai/relay.js';
import { UpstreamPayloadError } from '../../../providers/types.js';
import { textTokens } from '../../tokens.js';

/** Rerank answers of the upstreams that serve them, all read into Jina's shape (as the reference answers every one). */

/** A document as counted and as shown: its text when it has one (`{text}` or a string), else its JSON. */
function documentText(d: unknown): string {
  if (typeof d === 'string') return d;
  const text = objectOf(d).text;
  return typeof text === 'string' ? text : JSON.stringify(d ?? '');
}

/** The prompt the tokenizer counts when the upstream reports no usage: the documents and the query. */
export function rerankTokens(body: Json): number {
  const documents = Array.isArray(body.documents) ? body.documents : [];
  return textTokens([...documents.map(documentText), typeof body.query === 'string' ? body.query : ''].join('\n'));
}

/**
 * The tokens an upstream billed, the first it gives of: Jina's `usage.total_tokens` (or OpenAI-style
 * `prompt_tokens`), Cohere's `meta.billed_units.input_tokens`, SiliconFlow's `meta.tokens.input_tokens`; null
 * when it reports none (Xinference) or only zeros. A value that is no token count is the usage check's to refuse.
 */
export function rerankUsage(json: unknown): ChatUsage | null {
  const answer = objectOf(json);
  const usage = objectOf(answer.usage);
  const meta = objectOf(answer.meta);
  const n = [usage.total_tokens, usage.prompt_tokens, objectOf(meta.billed_units).input_tokens, objectOf(meta.tokens).input_tokens].find((v) => v !== undefined && v !== null && v !== 0);
  return n === undefined ? null : { prompt_tokens: n as number, completion_tokens: 0, total_tokens: n as number };
}

/**
 * The document a result shows: none when the caller set `return_documents: false`; else the upstream's, and
 * when it gave none (Xinference's empty string) but the caller asked for documents, the request's (`{text}`
 * for a string, as Jina writes it).
 */
function shownDocument(upstream: unknown, asked: unknown, returnDocuments: unknown): unknown {
  if (returnDocuments === false) return undefined;
  if (upstream !== undefined && upstream !== null && upstream !== '') return upstream;
  if (returnDocuments !== true || asked === undefined) return undefined;
  return typeof asked === 'string' ? { text: asked } : asked;
}

/**
 * An upstream's rerank results in Jina's shape: `{index, relevance_score, document?}` in the upstream's
 * order (see shownDocument for their documents). An error body, or one without results, throws
 * (retried elsewhere).
 */
export function jinaResults(json: unknown, request: Json): Json[] {
  const error = payloadError(json);
  if (error) throw error;
  const body = objectOf(json);
  if (!Array.isArray(body.results)) throw new UpstreamPayloadError('the answer has no results');
  const documents = Array.isArray(request.documents) ? request.documents : [];
  return listOf(body.results).map((r) => {
    if (typeof r.index !== 'number' || !Number.isInteger(r.index) || typeof r.relevance_score !== 'number') throw new UpstreamPayloadError('a rerank result has no index or relevance_score');
    const document = shownDocument(r.document, documents[r.index], request.return_documents);
    return { index: r.index, relevance_score: r.relevance_score, ...(document !== undefined ? { document } : {}) };
  });
}

