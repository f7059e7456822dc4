import { badResponse, okJson, send } from '../../upstream/http.js';
import { probe } from '../../upstream/probe.js';
import { dataIds, uniqueIds, type Provider } from '../types.js';
import { anthropicHeaders } from './api.js';
import { anthropicRelay } from './relay.js';

/** Pages of the model list followed at most this many times. */
const MAX_PAGES = 20;

/** Anthropic Messages API: `x-api-key` + `anthropic-version`; the model list is paged with `after_id`. */
export const anthropic: Provider = {
  name: 'anthropic',
  channelTypes: [14],
  async listModels(ctx, t) {
    const ids: unknown[] = [];
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query: string = `?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`;
      const body: { has_more?: unknown; last_id?: unknown } = okJson(await send(ctx.upstream, t, { url: `${t.baseUrl}/v1/models${query}`, headers: anthropicHeaders(t) }), t);
      const pageIds = dataIds(body);
      if (!pageIds) throw badResponse('the model list has no data array');
      ids.push(...pageIds);
      if (body.has_more !== true || typeof body.last_id !== 'string') break;
      after = body.last_id;
    }
    return uniqueIds(ids);
  },
  endpoints: ['anthropic'],
  test(ctx, t, r) {
    const body = { model: r.model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], stream: r.stream };
    return probe(ctx.upstream, t, { url: `${t.baseUrl}/v1/messages`, headers: anthropicHeaders(t), body, stream: r.stream, timeoutMs: r.timeoutMs });
  },
  relay: anthropicRelay,
};
