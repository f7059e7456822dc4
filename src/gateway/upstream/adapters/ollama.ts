import { badResponse, okJson, send } from '../http.js';
import type { UpstreamTarget } from '../target.js';
import { probe } from '../probe.js';
import { uniqueIds } from '../../providers/types.js';
import { openaiPath, openaiTestBody, type ChannelAdapter } from './types.js';

/** A bearer key only when the channel has one (a plain local Ollama has none). */
export function ollamaHeaders(t: UpstreamTarget): Record<string, string> {
  return t.key ? { authorization: `Bearer ${t.key}`, accept: 'application/json' } : { accept: 'application/json' };
}

/** Ollama's native API: `/api/tags` lists the local models. */
export const ollamaAdapter: ChannelAdapter = {
  async listModels(ctx, t) {
    const body = okJson<{ models?: unknown }>(await send(ctx.upstream, t, { url: `${t.baseUrl}/api/tags`, headers: ollamaHeaders(t) }), t);
    if (!Array.isArray(body.models)) throw badResponse('the tag list has no models array');
    return uniqueIds(body.models.map((m) => (m as { name?: unknown; model?: unknown })?.name ?? (m as { model?: unknown })?.model));
  },
  // Ollama serves the OpenAI-compatible chat and embeddings endpoints; the test uses those.
  endpoints: ['openai', 'embeddings'],
  test(ctx, t, r) {
    const stream = r.stream && r.endpoint !== 'embeddings';
    return probe(ctx.upstream, t, { url: t.baseUrl + openaiPath(r.endpoint), headers: ollamaHeaders(t), body: openaiTestBody({ ...r, stream }), stream, timeoutMs: r.timeoutMs });
  },
};
