import { AppError } from '../../../kit/http/errors.js';
import { TYPE_CODEX } from '../../channels/types.js';
import { probe } from '../../upstream/probe.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import type { Provider } from '../types.js';

/** The stored key of a coder (Codex) channel: a JSON object of OAuth tokens. */
export interface CodexKey {
  access_token: string;
  refresh_token?: string;
  account_id: string;
  email?: string;
  type?: string;
  last_refresh?: string;
  /** RFC 3339 expiry of the access token. */
  expired?: string;
  [extra: string]: unknown;
}

/** Parses a coder channel's key; CHANNEL_INVALID (never echoing the key) when it is not such an object. */
export function parseCodexKey(text: string): CodexKey {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new AppError('CHANNEL_INVALID', { params: { detail: 'a coder channel key must be a JSON object' } });
  }
  const k = v as Partial<CodexKey> | null;
  if (!k || typeof k !== 'object' || Array.isArray(k) || typeof k.access_token !== 'string' || !k.access_token) {
    throw new AppError('CHANNEL_INVALID', { params: { detail: 'a coder channel key needs access_token' } });
  }
  // A missing account id is filled in by a refresh (G06) from the token's claims.
  return { ...k, account_id: typeof k.account_id === 'string' ? k.account_id : '' } as CodexKey;
}

/**
 * The models a ChatGPT-account (Codex) channel serves. The backend has no model-list endpoint for these
 * credentials, so the list is the product's own (as the reference's adaptor keeps one).
 */
export const CODEX_MODELS = ['gpt-5', 'gpt-5-codex', 'gpt-5-codex-mini', 'gpt-5.1', 'gpt-5.1-codex', 'gpt-5.1-codex-max', 'gpt-5.1-codex-mini', 'codex-mini-latest'];

/**
 * OpenAI Codex through a ChatGPT account: `/backend-api/codex/...` with the OAuth access token. The relay
 * sends it no calls.
 */
export const codex: Provider = {
  name: 'codex',
  channelTypes: [TYPE_CODEX],
  async listModels() {
    return [...CODEX_MODELS];
  },
  endpoints: ['openai-response'],
  // The backend answers only streamed requests, so the test always streams (as the reference's does).
  test(ctx, t, r) {
    const key = parseCodexKey(t.key);
    const body = { model: r.model, instructions: '', input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }], stream: true, store: false };
    return probe(ctx.upstream, t, { url: `${t.baseUrl}/backend-api/codex/responses`, headers: codexHeaders(t, key), body, stream: true, timeoutMs: r.timeoutMs });
  },
};

/** The ChatGPT backend's headers: the OAuth access token and the account id. */
export function codexHeaders(_t: UpstreamTarget, key: CodexKey): Record<string, string> {
  if (!key.account_id) throw new AppError('CHANNEL_INVALID', { params: { detail: 'the coder key has no account_id: refresh it (G06)' } });
  return { authorization: `Bearer ${key.access_token}`, 'chatgpt-account-id': key.account_id, accept: 'application/json' };
}
