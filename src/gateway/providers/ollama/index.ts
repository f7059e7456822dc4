import { badResponse, okJson, send } from '../../upstream/http.js';
import { probe } from '../../upstream/probe.js';
import { openaiPath, openaiTestBody } from '../openai/api.js';
import { uniqueIds, type Provider } from '../types.js';
import { ollamaHeaders } from './api.js';
import { ollamaRelay } from './relay.js';

/** Ollama's native API: `/api/tags` lists the local models; the relay speaks `/api/chat` and `/api/embed`. */
export const ollama: Provider = {
  name: 'ollama',
  channelTypes: [4],
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
  relay: ollamaRelay,
};
