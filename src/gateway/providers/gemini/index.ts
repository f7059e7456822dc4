import { badResponse, okJson, send } from '../../upstream/http.js';
import { probe } from '../../upstream/probe.js';
import { uniqueIds, type Provider } from '../types.js';
import { geminiHeaders } from './api.js';
import { geminiRelay } from './relay.js';

const MAX_PAGES = 20;

/** Gemini (Generative Language API, v1beta): models are `models/<id>`, listed in pages. */
export const gemini: Provider = {
  name: 'gemini',
  channelTypes: [24],
  async listModels(ctx, t) {
    const ids: unknown[] = [];
    let token: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const query: string = `?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`;
      const body: { models?: unknown; nextPageToken?: unknown } = okJson(await send(ctx.upstream, t, { url: `${t.baseUrl}/v1beta/models${query}`, headers: geminiHeaders(t) }), t);
      if (!Array.isArray(body.models)) throw badResponse('the model list has no models array');
      ids.push(...body.models.map((m: unknown) => String((m as { name?: unknown })?.name ?? '').replace(/^models\//, '')));
      if (typeof body.nextPageToken !== 'string' || !body.nextPageToken) break;
      token = body.nextPageToken;
    }
    return uniqueIds(ids);
  },
  endpoints: ['gemini'],
  test(ctx, t, r) {
    const action = r.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
    const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 16 } };
    const url = `${t.baseUrl}/v1beta/models/${encodeURIComponent(r.model)}:${action}`;
    return probe(ctx.upstream, t, { url, headers: geminiHeaders(t), body, stream: r.stream, timeoutMs: r.timeoutMs });
  },  relay: geminiRelay,
};
