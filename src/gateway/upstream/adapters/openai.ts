import { badResponse, okJson, send } from '../http.js';
import type { UpstreamTarget } from '../target.js';
import { probe } from '../probe.js';
import { dataIds, uniqueIds } from '../../providers/types.js';
import { openaiPath, openaiTestBody, type ChannelAdapter } from './types.js';

const TYPE_ALI = 17;
const TYPE_ZHIPU_V4 = 26;

/** The model-list path of OpenAI-compatible types (Ali and Zhipu v4 keep theirs elsewhere). */
function modelsPath(type: number): string {
  if (type === TYPE_ALI) return '/compatible-mode/v1/models';
  if (type === TYPE_ZHIPU_V4) return '/api/paas/v4/models';
  return '/v1/models';
}

export function openaiHeaders(t: UpstreamTarget): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${t.key}`, accept: 'application/json' };
  if (t.organization) h['openai-organization'] = t.organization;
  return h;
}

/** OpenAI and every OpenAI-compatible type (DeepSeek, OpenRouter, SiliconFlow, Moonshot, xAI, Mistral, …). */
export const openaiAdapter: ChannelAdapter = {
  async listModels(ctx, t) {
    const res = await send(ctx.upstream, t, { url: t.baseUrl + modelsPath(t.type), headers: openaiHeaders(t) });
    const ids = dataIds(okJson(res, t));
    if (!ids) throw badResponse('the model list has no data array');
    return uniqueIds(ids);
  },
  endpoints: ['openai', 'openai-response', 'embeddings'],
  test(ctx, t, r) {
    const stream = r.stream && r.endpoint !== 'embeddings';
    return probe(ctx.upstream, t, { url: t.baseUrl + openaiPath(r.endpoint), headers: openaiHeaders(t), body: openaiTestBody({ ...r, stream }), stream, timeoutMs: r.timeoutMs });
  },
};
