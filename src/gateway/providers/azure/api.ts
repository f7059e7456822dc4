import type { UpstreamTarget } from '../../upstream/target.js';

/** The data-plane API version: the channel's `other` when it names one, else a current GA version. */
export function azureApiVersion(t: UpstreamTarget): string {
  const v = t.other.trim();
  return /^\d{4}-\d{2}-\d{2}(-preview)?$/.test(v) ? v : '2024-10-21';
}

export function azureHeaders(t: UpstreamTarget): Record<string, string> {
  return { 'api-key': t.key, accept: 'application/json' };
}

/** Chat, completions, embeddings and the media endpoints go to the deployment named like the (mapped) model. */
export function deploymentUrl(t: UpstreamTarget, model: string, path: 'chat/completions' | 'completions' | 'embeddings' | 'images/generations' | 'audio/speech' | 'audio/transcriptions'): string {
  return `${t.baseUrl}/openai/deployments/${encodeURIComponent(model)}/${path}?api-version=${encodeURIComponent(azureApiVersion(t))}`;
}

/** Responses go to the resource, with the channel's azure_responses_version when it has one. */
export function responsesUrl(t: UpstreamTarget): string {
  const version = typeof t.settings.azure_responses_version === 'string' && t.settings.azure_responses_version ? t.settings.azure_responses_version : 'preview';
  return `${t.baseUrl}/openai/responses?api-version=${encodeURIComponent(version)}`;
}
