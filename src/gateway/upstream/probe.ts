import { AppError } from '../../kit/http/errors.js';
import { parseJson, type UpstreamClient } from '../../kit/upstream/client.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { excerpt } from '../../kit/upstream/scrub.js';
import { upstreamAppError, upstreamMessage } from './http.js';
import type { UpstreamTarget } from './target.js';

/**
 * One minimal test request to an upstream and how it ended. A failure carries the reference's error code
 * (`bad_response`, `do_request_failed`, `bad_response_body`, or the upstream's own code), the upstream's
 * HTTP status where there was one, and a short message with every secret of the channel removed.
 */
export type ProbeOutcome = { ok: true } | { ok: false; errorCode: string; status?: number; message: string };

export interface ProbeRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  stream: boolean;
  timeoutMs: number;
}

function failure(errorCode: string, message: string, status?: number): ProbeOutcome {
  return { ok: false, errorCode, message, ...(status !== undefined ? { status } : {}) };
}

/** The upstream's own error code in an error body (OpenAI `error.code`/`type`, Anthropic `error.type`, Gemini `error.status`). */
function upstreamCode(text: string): string | null {
  const body = parseJson(text) as { error?: { code?: unknown; type?: unknown; status?: unknown } } | undefined;
  const e = body?.error;
  if (!e || typeof e !== 'object') return null;
  // Plain identifiers only, and never `channel:…`: those are this gateway's own codes, and an upstream must
  // not be able to name one (they disable a channel).
  for (const v of [e.code, e.type, e.status]) if (typeof v === 'string' && /^[\w:.-]{1,64}$/.test(v) && !v.startsWith('channel:')) return v;
  return null;
}

function fromThrown(e: unknown, t: UpstreamTarget): ProbeOutcome {
  const mapped = upstreamAppError(e, t);
  if (mapped instanceof AppError) {
    const detail = String(mapped.options.params?.detail ?? '');
    if (e instanceof UpstreamError && e.kind === 'refused') throw mapped;
    return failure('do_request_failed', `${mapped.code}: ${detail}`);
  }
  throw e;
}

/** A 200 answer that still reports an error (an `error` object), as some compatible upstreams do. */
function errorInBody(value: unknown): boolean {
  const err = (value as { error?: unknown } | null)?.error;
  return !!err && (typeof err === 'object' || typeof err === 'string');
}

/**
 * Sends the request and judges the answer: non-2xx, a 2xx body with an `error`, a body that is not JSON
 * (non-streamed), or a stream without a single data event are failures. Address refusals are not test
 * results: they throw (400 UPSTREAM_ADDRESS_REFUSED).
 */
export async function probe(upstream: UpstreamClient, t: UpstreamTarget, r: ProbeRequest): Promise<ProbeOutcome> {
  const req = {
    url: r.url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...r.headers, ...t.headers },
    body: JSON.stringify(r.body),
    proxy: t.proxy,
    timeoutMs: r.timeoutMs,
  };
  try {
    if (!r.stream) {
      const res = await upstream.request(req);
      if (res.status < 200 || res.status >= 300) return failure(upstreamCode(res.text) ?? 'bad_response', upstreamMessage(res.text, t), res.status);
      const value = parseJson(res.text);
      if (value === undefined) return failure('bad_response_body', 'the answer is not JSON: ' + excerpt(res.text, t.secrets, 120));
      if (errorInBody(value)) return failure(upstreamCode(res.text) ?? 'bad_response', upstreamMessage(res.text, t), res.status);
      return { ok: true };
    }
    const s = await upstream.stream({ ...req, headers: { ...req.headers, accept: 'text/event-stream' }, idleMs: r.timeoutMs });
    if (s.status < 200 || s.status >= 300) {
      const text = await s.text().catch(() => '');
      return failure(upstreamCode(text) ?? 'bad_response', upstreamMessage(text, t), s.status);
    }
    let events = 0;
    for await (const line of s.lines()) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]' || data === '') continue;
      const value = parseJson(data);
      if (errorInBody(value)) return (s.close(), failure(upstreamCode(data) ?? 'bad_response', upstreamMessage(data, t), s.status));
      events++;
    }
    return events > 0 ? { ok: true } : failure('bad_response', 'the stream ended without a data event');
  } catch (e) {
    return fromThrown(e, t);
  }
}
