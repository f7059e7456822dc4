import { Type } from '@sinclair/typebox';
import type { EmbeddingsBody, Json } from '../../../providers/pivot.js';
import { UnsupportedByChannel } from '../../../providers/types.js';
import { inputTokens } from '../../tokens.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL } from '../schema.js';
import { billedUsage, showEmbeddingsUsage } from '../shown-usage.js';
import type { CallerFormat } from '../types.js';

/** An embedding as OpenAI's base64 form: float32 little-endian bytes. */
function float32Base64(values: number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

/**
 * OpenAI embeddings (`POST /v1/embeddings`): no chat request; every provider with an embeddings API reads
 * OpenAI's body (ProviderRelay.embeddings) and answers an OpenAI list. Never streamed.
 */
export const embeddings: CallerFormat = {
  name: 'embeddings',
  body: Type.Object(
    { model: MODEL, input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]) },
    { additionalProperties: true },
  ),
  target: ({ body }) => ({ model: body.model, stream: false }),
  missing: (body) => (body.input === undefined ? 'input is required' : null),
  vendorPath: () => '/v1/embeddings',
  toProvider(p, t, body, model) {
    // Another channel of the model may serve them: a failure of this channel, not of the call.
    if (!p.embeddings) throw new UnsupportedByChannel(`channel type ${t.type} serves no embeddings`, 'this model serves no embeddings');
    return p.embeddings(t, { ...body, model } as EmbeddingsBody);
  },
  promptTokens: (body) => inputTokens(body.input),
  answer({ provider, native, upstreamModel, json, request, usage: usageOf, passed }) {
    const result = provider.embeddingsResult!(json, upstreamModel);
    const reported = result.usage ? { prompt_tokens: result.usage.prompt_tokens, completion_tokens: 0, total_tokens: result.usage.prompt_tokens } : null;
    const usage = usageOf(reported, '');
    if (native) return { body: passed(usage), usage };
    // OpenAI answers base64 (float32, little-endian) when asked, and its SDKs ask by default.
    if (request.encoding_format === 'base64') {
      for (const d of result.data) if (Array.isArray(d.embedding)) d.embedding = float32Base64(d.embedding);
    }
    const billed = billedUsage(usage);
    if (billed) showEmbeddingsUsage(result as unknown as Json, billed);
    return { body: JSON.stringify(result), usage };
  },
  showUsage: showEmbeddingsUsage,
  relayPath: /^\/relay\/v1\/embeddings\/?$/,
  errorBody: openaiErrorBody,
};
