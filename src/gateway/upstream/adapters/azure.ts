import { badResponse, okJson, send } from '../http.js';
import type { UpstreamTarget } from '../target.js';
import { probe } from '../probe.js';
import { dataIds, uniqueIds } from '../../providers/types.js';
import { openaiTestBody, type ChannelAdapter } from './types.js';

/** The data-plane API version: the channel's `other` when it names one, else a current GA version. */
export function azureApiVersion(t: UpstreamTarget): string {
  const v = t.other.trim();
  return /^\d{4}-\d{2}-\d{2}(-preview)?$/.test(v) ? v : '2024-10-21';
}

export function azureHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'api-key': t.key, accept: 'application/json' };
}

/** Azure OpenAI: `api-key` header, `/openai/...?api-version=` paths on the resource's base URL. */
export const azureAdapter: ChannelAdapter = {
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
    // Chat and embeddings go to the deployment named like the model; responses to the resource, with the
    // channel's azure_responses_version when it has one.
    const url =
      r.endpoint === 'openai-response'
        ? `${t.baseUrl}/openai/responses?api-version=${encodeURIComponent(typeof t.settings.azure_responses_version === 'string' && t.settings.azure_responses_version ? t.settings.azure_responses_version : 'preview')}`
        : `${t.baseUrl}/openai/deployments/${encodeURIComponent(r.model)}/${r.endpoint === 'embeddings' ? 'embeddings' : 'chat/completions'}?api-version=${encodeURIComponent(azureApiVersion(t))}`;
    return probe(ctx.upstream, t, { url, headers: azureHeaders(t), body, stream, timeoutMs: r.timeoutMs });
  },
};
