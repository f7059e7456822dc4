import { AppError } from '../../kit/http/errors.js';
import { parseJson, type UpstreamClient, type UpstreamRequest, type UpstreamResponse } from '../../kit/upstream/client.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { excerpt, scrubSecrets } from '../../kit/upstream/scrub.js';
import type { UpstreamTarget } from './target.js';

const CODES = {
  refused: 'UPSTREAM_ADDRESS_REFUSED',
  bad_url: 'UPSTREAM_URL_INVALID',
  timeout: 'UPSTREAM_TIMEOUT',
  too_large: 'UPSTREAM_BODY_TOO_LARGE',
  unreachable: 'UPSTREAM_UNREACHABLE',
  over_budget: 'UPSTREAM_BUFFER_FULL',
} as const;

/** The AppError for a failed upstream request; its detail holds no secret of the target. */
export function upstreamAppError(e: unknown, t: Pick<UpstreamTarget, 'secrets'>): AppError | unknown {
  if (e instanceof UpstreamError) return new AppError(CODES[e.kind], { params: { detail: scrubSecrets(e.detail, t.secrets) } });
  return e;
}

/** A request to the target's upstream: its proxy and header overrides applied, failures as AppErrors. */
export async function send(upstream: UpstreamClient, t: UpstreamTarget, r: Omit<UpstreamRequest, 'proxy'>): Promise<UpstreamResponse> {
  try {
    return await upstream.request({ ...r, proxy: t.proxy, headers: { ...r.headers, ...t.headers } });
  } catch (e) {
    throw upstreamAppError(e, t);
  }
}

/** The upstream's own error message in a body (OpenAI, Anthropic, Gemini and plain shapes), scrubbed and short. */
export function upstreamMessage(text: string, t: Pick<UpstreamTarget, 'secrets'>): string {
  const body = parseJson(text) as { error?: unknown; message?: unknown; detail?: unknown } | undefined;
  const err = body?.error as { message?: unknown } | string | undefined;
  const candidates = [typeof err === 'object' ? err?.message : err, body?.message, body?.detail];
  const msg = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '') ?? text;
  return excerpt(msg, t.secrets) || '(empty body)';
}

/** Throws UPSTREAM_BAD_STATUS unless the answer is 2xx; data.upstream_status carries the status. */
export function expectOk(res: UpstreamResponse, t: Pick<UpstreamTarget, 'secrets'>): UpstreamResponse {
  if (res.status >= 200 && res.status < 300) return res;
  throw new AppError('UPSTREAM_BAD_STATUS', { params: { status: res.status, detail: upstreamMessage(res.text, t) }, data: { upstream_status: res.status } });
}

/** The JSON of a 2xx answer; UPSTREAM_BAD_RESPONSE when it is not JSON. */
export function okJson<T = unknown>(res: UpstreamResponse, t: Pick<UpstreamTarget, 'secrets'>): T {
  expectOk(res, t);
  const v = parseJson(res.text);
  if (v === undefined) throw new AppError('UPSTREAM_BAD_RESPONSE', { params: { detail: 'not JSON: ' + excerpt(res.text, t.secrets, 120) } });
  return v as T;
}

export function badResponse(detail: string): AppError {
  return new AppError('UPSTREAM_BAD_RESPONSE', { params: { detail } });
}
