import { AppError } from '../../kit/http/errors.js';
import { parseJson, type UpstreamClient } from '../../kit/upstream/client.js';
import { excerpt, scrubSecrets } from '../../kit/upstream/scrub.js';
import { send, upstreamAppError } from '../upstream/http.js';
import { inputTarget, type UpstreamTarget } from '../upstream/target.js';

export type Query = Record<string, string | number | boolean | number[] | undefined>;

/** `?a=1&b=x` with undefined and empty values left out and lists joined by commas. */
export function queryString(q: Query): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === '') continue;
    parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : String(v))}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

/**
 * The io.net deployment API (CaaS) as the reference uses it: `X-API-KEY`, JSON bodies, answers either bare
 * or under `data`, errors as `{detail}`. Provider refusals keep their meaning: the key (401/403), an unknown
 * deployment (404), a refused request (4xx, with the provider's detail), the provider's own failure (5xx).
 */
export class IoNetClient {
  private readonly target: UpstreamTarget;

  constructor(
    private readonly upstream: UpstreamClient,
    baseUrl: string,
    private readonly apiKey: string,
    private readonly timeoutMs: number,
  ) {
    this.target = inputTarget({ type: 0, base_url: baseUrl, key: apiKey });
  }

  get baseUrl() {
    return this.target.baseUrl;
  }

  async call<T = unknown>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const res = await send(this.upstream, this.target, {
      url: this.target.baseUrl + path,
      method,
      headers: { 'x-api-key': this.apiKey, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: this.timeoutMs,
    });
    const parsed = parseJson(res.text);
    if (res.status >= 200 && res.status < 300) {
      if (parsed === undefined) return res.text as T;
      const data = (parsed as { data?: unknown })?.data;
      return (data !== undefined && parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? data : parsed) as T;
    }
    const detail = excerpt(detailOf(parsed) ?? res.text, this.target.secrets) || `HTTP ${res.status}`;
    if (res.status === 401 || res.status === 403) throw new AppError('DEPLOYMENT_PROVIDER_KEY_REJECTED', { params: { detail }, data: { upstream_status: res.status } });
    if (res.status === 404) throw new AppError('DEPLOYMENT_NOT_FOUND', { params: { detail }, data: { upstream_status: res.status } });
    if (res.status < 500) throw new AppError('DEPLOYMENT_PROVIDER_REJECTED', { params: { detail }, data: { upstream_status: res.status } });
    throw new AppError('UPSTREAM_BAD_STATUS', { params: { status: res.status, detail }, data: { upstream_status: res.status } });
  }

  /** The raw body of a GET (logs are plain text). */
  async text(path: string): Promise<string> {
    const v = await this.call<unknown>('GET', path);
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  /** A streamed GET (followed logs): lines as they arrive, `signal` ends it. */
  async lines(path: string, idleMs: number, totalMs: number, signal: AbortSignal) {
    try {
      const s = await this.upstream.stream({ url: this.target.baseUrl + path, headers: { 'x-api-key': this.apiKey }, timeoutMs: totalMs, idleMs, signal });
      if (s.status < 200 || s.status >= 300) {
        const text = await s.text().catch(() => '');
        throw new AppError(s.status === 404 ? 'DEPLOYMENT_NOT_FOUND' : 'UPSTREAM_BAD_STATUS', { params: { status: s.status, detail: excerpt(detailOf(parseJson(text)) ?? text, this.target.secrets) }, data: { upstream_status: s.status } });
      }
      return s;
    } catch (e) {
      throw upstreamAppError(e, this.target);
    }
  }

  /** Provider text (logs) with the API key removed; line breaks kept. */
  scrub(text: string) {
    return scrubSecrets(text, this.target.secrets);
  }
}

function detailOf(v: unknown): string | null {
  const d = (v as { detail?: unknown; message?: unknown } | undefined) ?? {};
  if (typeof d.detail === 'string') return d.detail;
  if (Array.isArray(d.detail)) return JSON.stringify(d.detail);
  return typeof d.message === 'string' ? d.message : null;
}
