import { badResponse, okJson, send } from '../../upstream/http.js';
import { probe } from '../../upstream/probe.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { JSON_HEADERS, mediaHeaders, openaiTestBody } from '../openai/api.js';
import { chatUpstreamBody, completion, embeddingsResult, mediaForm, openaiStreamDecoder } from '../openai/relay.js';
import type { ChatBody, EmbeddingsBody, Json } from '../pivot.js';
import { dataIds, uniqueIds, type Provider, type UpstreamCall } from '../types.js';
import { azureApiVersion, azureHeaders, deploymentUrl, responsesUrl } from './api.js';

function chat(t: UpstreamTarget, body: ChatBody, stream: boolean): UpstreamCall {
  return { url: deploymentUrl(t, body.model, 'chat/completions'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody(body, stream) };
}

function embeddings(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall {
  return { url: deploymentUrl(t, body.model, 'embeddings'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body };
}

function responses(t: UpstreamTarget, body: Json): UpstreamCall {
  return { url: responsesUrl(t), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body };
}

/** Azure OpenAI: `api-key` header, `/openai/...?api-version=` paths on the resource's base URL; bodies as OpenAI's. */
export const azure: Provider = {
  name: 'azure',
  channelTypes: [3],
  async listModels(ctx, t) {
    const url = `${t.baseUrl}/openai/models?api-version=${encodeURIComponent(azureApiVersion(t))}`;
    const ids = dataIds(okJson(await send(ctx.upstream, t, { url, headers: azureHeaders(t) }), t));
    if (!ids) throw badResponse('the model list has no data array');
    return uniqueIds(ids);
  },
  endpoints: ['openai', 'openai-response', 'embeddings'],
  test(ctx, t, r) {
    const stream = r.stream && r.endpoint !== 'embeddings';
    const body = openaiTestBody({ ...r, stream });
    const url = r.endpoint === 'openai-response' ? responsesUrl(t) : deploymentUrl(t, r.model, r.endpoint === 'embeddings' ? 'embeddings' : 'chat/completions');
    return probe(ctx.upstream, t, { url, headers: azureHeaders(t), body, stream, timeoutMs: r.timeoutMs });
  },
  relay: {
    chat,
    chatResult: completion,
    chatStream: openaiStreamDecoder,
    embeddings,
    embeddingsResult,
    native: {
      chat: (t, body, model, stream) => chat(t, { ...body, model } as ChatBody, stream),
      responses: (t, body, model) => responses(t, { ...body, model }),
      embeddings: (t, body, model) => embeddings(t, { ...body, model } as EmbeddingsBody),
      completions: (t, body, model, stream) => ({ url: deploymentUrl(t, model, 'completions'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body: chatUpstreamBody({ ...body, model }, stream) }),
      images: (t, body, model) => ({ url: deploymentUrl(t, model, 'images/generations'), headers: { ...azureHeaders(t), ...JSON_HEADERS }, body: { ...body, model } }),
      speech: (t, body, model) => ({ url: deploymentUrl(t, model, 'audio/speech'), headers: mediaHeaders(azureHeaders(t), 'json'), body: { ...body, model } }),
      transcriptions: (t, body, model, _stream, _vendor, files) => ({ url: deploymentUrl(t, model, 'audio/transcriptions'), headers: mediaHeaders(azureHeaders(t), 'form'), body: mediaForm(body, model, files) }),
    },
  },
};
