import { openaiHeaders, JSON_HEADERS } from '../openai/api.js';
import { openai } from '../openai/index.js';
import { completion, embeddingsResult, openaiStreamDecoder } from '../openai/relay.js';
import { UnsupportedByChannel, type Provider } from '../types.js';

/**
 * Jina (`https://api.jina.ai`): embeddings at `/v1/embeddings` and rerank at `/v1/rerank` with a Bearer key,
 * as the reference's Jina adaptor sends them; no chat. Model lists and tests are the OpenAI-compatible
 * ones (as before Jina had a provider of its own).
 */
export const jina: Provider = {
  ...openai,
  name: 'jina',
  channelTypes: [38],
  balances: undefined,
  relay: {
    chat(t) {
      throw new UnsupportedByChannel(`channel type ${t.type} serves no chat`, 'this model serves no chat');
    },
    chatResult: completion,
    chatStream: openaiStreamDecoder,
    // Jina names its output encoding otherwise: the floats come back, converted as OpenAI callers ask.
    embeddings: (t, { encoding_format: _, ...body }) => ({ url: `${t.baseUrl}/v1/embeddings`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body }),
    embeddingsResult,
    native: {
      rerank: (t, body, model) => ({ url: `${t.baseUrl}/v1/rerank`, headers: { ...openaiHeaders(t), ...JSON_HEADERS }, body: { ...body, model } }),
    },
  },
};
