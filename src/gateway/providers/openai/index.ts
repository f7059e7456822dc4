import { badResponse, okJson, send } from '../../upstream/http.js';
import { probe } from '../../upstream/probe.js';
import { dataIds, uniqueIds, type Provider } from '../types.js';
import { openaiHeaders, openaiPath, openaiTestBody } from './api.js';
import { OPENAI_STYLE_BALANCES } from './balance.js';
import { openaiRelay } from './relay.js';

const TYPE_ALI = 17;
const TYPE_ZHIPU_V4 = 26;

/** The model-list path of OpenAI-compatible types (Ali and Zhipu v4 keep theirs elsewhere). */
function modelsPath(type: number): string {
  if (type === TYPE_ALI) return '/compatible-mode/v1/models';
  if (type === TYPE_ZHIPU_V4) return '/api/paas/v4/models';
  return '/v1/models';
}

/**
 * OpenAI and the types that take OpenAI's requests as they are at `{base_url}/v1/chat/completions` (and
 * `/v1/embeddings`) with a Bearer key: those the reference serves with its plain OpenAI adaptor (OpenAI,
 * OpenAIMax, OhMyGPT, AILS, AIProxy, API2GPT, AIGC2D, 360, OpenRouter, FastGPT, LingYiWanWu, Xinference) and
 * the vendors whose own adaptor sends the same request there (Moonshot, SiliconFlow, Mistral, DeepSeek, xAI).
 * Not Custom (8): its base URL is the whole request URL. Model lists and tests of the types no provider
 * serves are tried this way too (see the registry).
 */
export const openai: Provider = {
  name: 'openai',
  channelTypes: [1, 6, 7, 9, 10, 12, 13, 19, 20, 22, 25, 31, 40, 42, 43, 47, 48],
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
  },  balances: OPENAI_STYLE_BALANCES,
  relay: openaiRelay,
};
