import { Type } from '@sinclair/typebox';
import { UnsupportedByChannel } from '../../../providers/types.js';
import { openaiErrorBody } from '../openai-error.js';
import { BLOCK, MODEL } from '../schema.js';
import { showEmbeddingsUsage } from '../shown-usage.js';
import type { CallerFormat } from '../types.js';
import { jinaResults, rerankTokens, rerankUsage } from './answer.js';

/**
 * Rerank (`POST /v1/rerank`, Jina's and Cohere's body: model, query, documents, top_n, return_documents):
 * passed to the channels that serve it (OpenAI-compatible types with a rerank endpoint, Jina), answered in
 * Jina's shape whatever the upstream wrote. Never streamed; priced by its input tokens or per call.
 */
export const rerank: CallerFormat = {
  name: 'rerank',
  body: Type.Object(
    {
      model: MODEL,
      query: Type.String(),
      documents: Type.Array(Type.Union([Type.String(), BLOCK]), { minItems: 1 }),
      top_n: Type.Optional(Type.Integer({ minimum: 1 })),
      return_documents: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: true },
  ),
  target: ({ body }) => ({ model: body.model, stream: false }),
  missing: (body) => (typeof body.query !== 'string' ? 'query is required' : !Array.isArray(body.documents) || body.documents.length === 0 ? 'documents must be a non-empty list' : null),
  vendorPath: () => '/v1/rerank',
  toProvider(_p, t) {
    // Another channel of the model may serve it: a failure of this channel, not of the call.
    throw new UnsupportedByChannel(`channel type ${t.type} serves no rerank`, 'this model serves no rerank');
  },
  promptTokens: rerankTokens,
  answer({ json, request, usage: usageOf }) {
    const results = jinaResults(json, request);
    const usage = usageOf(rerankUsage(json), '');
    const prompt = usage.usage.prompt_tokens;
    return { body: JSON.stringify({ results, usage: { prompt_tokens: prompt, total_tokens: prompt } }), usage };
  },
  showUsage: showEmbeddingsUsage,
  relayPath: /^\/relay\/v1\/rerank\/?$/,
  errorBody: openaiErrorBody,
};
