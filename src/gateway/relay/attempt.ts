import { parseJson, type UpstreamClient } from '../../kit/upstream/client.js';
import type { UpstreamStream } from '../../kit/upstream/body-stream.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { excerpt, scrubSecrets } from '../../kit/upstream/scrub.js';
import { upstreamMessage } from '../upstream/http.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { readBlock, type StreamReader } from './formats/stream-reader.js';
import { UnsupportedByChannel, UpstreamPayloadError, type UpstreamCall } from '../providers/types.js';
import { payloadError } from '../providers/openai/relay.js';
import { FormData } from '../../kit/http/multipart.js';
import type { CancelSignal } from '../../kit/http/cancel-signal.js';

/** Upstream statuses that say the request itself is wrong: another channel would refuse it too, and no breaker counts them. */
export const REQUEST_ERRORS = new Set([400, 413, 422]);

/**
 * What kind of failure it was, as the circuit breaker counts them (an HTTP status, or one of these). `local`: a
 * limit of this process refused the call (memory for answers); `unsupported`: the channel's wire format cannot
 * carry the request; `internal`: an exception of the relay's own, not of the upstream's answer. None of these
 * is ever the channel's failure.
 */
export type FailureKind = 'http' | 'timeout' | 'unreachable' | 'bad_response' | 'stream' | 'refused' | 'local' | 'unsupported' | 'internal';

/**
 * What a caller is told of a failure that is not about its request: what happened and what to do, never the
 * upstream's own words (they may name the operator's account, addresses or settings; staff read them in the
 * relay log).
 */
const CALLER_DETAILS: Record<string, string> = {
  relay_upstream_error: 'the upstream could not serve the call; try again later',
  relay_upstream_timeout: 'no answer in time; try again later',
  relay_upstream_unreachable: 'try again later',
  relay_upstream_bad_response: 'try again later',
  relay_internal_error: 'try again later',
};

/** Statuses by which an upstream says it is busy (rate limited, unavailable, Anthropic's overloaded). */
const BUSY = new Set([429, 503, 529]);

/** One channel's failure, before any output reached the caller. */
export class AttemptFailure extends Error {
  /** The upstream's own error code (for the auto-disable rules), when it named one. */
  readonly upstreamCode: string | null;
  readonly kind: FailureKind;
  /** How long the upstream asked to be left alone (Retry-After), when it did. */
  readonly retryAfterMs: number | null;
  /**
   * What the caller is told: the upstream's message when it refused the request itself (400, 413, 422: the
   * caller can fix it), else a plain account of what happened; `detail` stays in the relay log for staff.
   */
  readonly callerDetail: string;
  /** The relay's own exception behind an `internal` failure, for the log (never shown to the caller). */
  readonly internal: unknown;

  constructor(
    /** A catalog code (relay_upstream_*). */
    readonly code: string,
    /** The upstream's HTTP status, 0 when there was none. */
    readonly status: number,
    /** What went wrong, secrets of the channel removed. */
    readonly detail: string,
    readonly retryable: boolean,
    more: { upstreamCode?: string | null; kind?: FailureKind; retryAfterMs?: number | null; callerDetail?: string; internal?: unknown } = {},
  ) {
    super(detail);
    this.name = 'AttemptFailure';
    this.callerDetail = more.callerDetail ?? (REQUEST_ERRORS.has(status) ? detail : BUSY.has(status) ? 'the upstream is busy; try again later' : (CALLER_DETAILS[code] ?? detail));
    this.upstreamCode = more.upstreamCode ?? null;
    this.kind = more.kind ?? (status > 0 ? 'http' : 'bad_response');
    this.retryAfterMs = more.retryAfterMs ?? null;
    this.internal = more.internal;
  }
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export interface Limits {
  firstByteMs: number;
  idleMs: number;
  totalMs: number;
  maxResponseBytes: number;
}

/** An upstream's error code, unless it holds a secret of the channel (a key echoed as a code). */
function cleanCode(code: string | null, t: UpstreamTarget): string | null {
  return code !== null && scrubSecrets(code, t.secrets) === code ? code : null;
}

function upstreamCodeOf(text: string): string | null {
  const e = (parseJson(text) as { error?: { code?: unknown; type?: unknown; status?: unknown } } | undefined)?.error;
  if (!e || typeof e !== 'object') return null;
  for (const v of [e.code, e.type, e.status]) if (typeof v === 'string' && /^[\w:.-]{1,64}$/.test(v) && !v.startsWith('channel:')) return v;
  return null;
}

export function httpFailure(status: number, text: string, t: UpstreamTarget, headers: Record<string, string | string[] | undefined> = {}): AttemptFailure {
  return new AttemptFailure('relay_upstream_error', status, upstreamMessage(text, t), !REQUEST_ERRORS.has(status), { upstreamCode: cleanCode(upstreamCodeOf(text), t), retryAfterMs: retryAfterMs(headers['retry-after']) });
}

/**
 * Any error of an attempt as an AttemptFailure. An error that neither the upstream exchange nor the reading of
 * its answer raised on purpose is the relay's own (a bug, a stack overflow): `internal`, not retried, a 500.
 */
export function asFailure(e: unknown, t: UpstreamTarget): AttemptFailure {
  if (e instanceof AttemptFailure) return e;
  if (e instanceof UpstreamError) {
    if (e.kind === 'over_budget') return new AttemptFailure('relay_busy', 0, e.detail, false, { kind: 'local' });
    const code = e.kind === 'timeout' ? 'relay_upstream_timeout' : e.kind === 'too_large' ? 'relay_upstream_bad_response' : 'relay_upstream_unreachable';
    const kind: FailureKind = e.kind === 'timeout' ? 'timeout' : e.kind === 'too_large' ? 'bad_response' : e.kind === 'refused' || e.kind === 'bad_url' ? 'refused' : 'unreachable';
    return new AttemptFailure(code, 0, excerpt(e.detail, t.secrets), e.kind !== 'too_large', { kind });
  }
  if (e instanceof UpstreamPayloadError) return new AttemptFailure('relay_upstream_error', e.status, excerpt(e.message, t.secrets), true, { upstreamCode: cleanCode(e.upstreamCode, t) });
  if (e instanceof UnsupportedByChannel) return new AttemptFailure(e.code, 0, e.message, true, { kind: 'unsupported', callerDetail: e.callerDetail });
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new AttemptFailure('relay_internal_error', 0, excerpt(`an internal error of the relay: ${what}`, t.secrets), false, { kind: 'internal', internal: e });
}

function requestOf(call: UpstreamCall, t: UpstreamTarget, limits: Limits, signal: CancelSignal | undefined) {
  return {
    url: call.url,
    method: 'POST' as const,
    headers: { ...call.headers, ...t.headers },
    body: call.body instanceof FormData ? call.body : JSON.stringify(call.body),
    proxy: t.proxy,
    timeoutMs: limits.totalMs,
    firstByteMs: limits.firstByteMs,
    maxBytes: limits.maxResponseBytes,
    signal,
  };
}

/** A non-streamed call: the 2xx answer's text and JSON, or an AttemptFailure. */
export async function sendJson(upstream: UpstreamClient, call: UpstreamCall, t: UpstreamTarget, limits: Limits, signal?: CancelSignal) {
  try {
    const res = await upstream.request(requestOf(call, t, limits, signal));
    if (res.status < 200 || res.status >= 300) throw httpFailure(res.status, res.text, t, res.headers);
    const json = parseJson(res.text);
    if (json === undefined) throw new AttemptFailure('relay_upstream_bad_response', res.status, 'the answer is not JSON: ' + excerpt(res.text, t.secrets, 120), true);
    return { text: res.text, json };
  } catch (e) {
    throw asFailure(e, t);
  }
}

/** A non-streamed call whose answer may be any text (a transcription as text or subtitles): its text and media type. */
export async function sendWhole(upstream: UpstreamClient, call: UpstreamCall, t: UpstreamTarget, limits: Limits, signal?: CancelSignal) {
  try {
    const res = await upstream.request(requestOf(call, t, limits, signal));
    if (res.status < 200 || res.status >= 300) throw httpFailure(res.status, res.text, t, res.headers);
    return { text: res.text, contentType: contentTypeOf(res.headers) };
  } catch (e) {
    throw asFailure(e, t);
  }
}

const contentTypeOf = (headers: Record<string, string | string[] | undefined>) => String(headers['content-type'] ?? 'application/octet-stream');

/** An answer of bytes (audio) opened and read up to its first bytes, which are `first`. */
export interface OpenBytes {
  contentType: string;
  first: Buffer;
  rest: AsyncIterator<Buffer>;
  stream: UpstreamStream;
}

/**
 * Opens a call answered in bytes and reads it until its first bytes came: a bad status, a JSON error in a
 * 2xx answer, an answer that ends or breaks or goes quiet before then can still fail over to another channel.
 */
export async function openBytes(upstream: UpstreamClient, call: UpstreamCall, t: UpstreamTarget, limits: Limits, signal?: CancelSignal): Promise<OpenBytes> {
  let stream: UpstreamStream | null = null;
  try {
    stream = await upstream.stream({ ...requestOf(call, t, limits, signal), idleMs: limits.idleMs });
    if (stream.status < 200 || stream.status >= 300) throw httpFailure(stream.status, await stream.text().catch(() => ''), t, stream.headers);
    const contentType = contentTypeOf(stream.headers);
    // Some compatible upstreams answer an error with a 2xx JSON body: no audio to pass on.
    if (/json/i.test(contentType)) {
      const text = await stream.text();
      const err = payloadError(parseJson(text));
      if (err) throw err;
      return { contentType, first: Buffer.from(text), rest: (async function* (): AsyncGenerator<Buffer> {})(), stream };
    }
    const rest = stream.chunks()[Symbol.asyncIterator]();
    for (;;) {
      const next = await rest.next();
      if (next.done) throw new AttemptFailure('relay_upstream_bad_response', stream.status, 'the answer ended before any bytes', true, { kind: 'stream' });
      if (next.value.length) return { contentType, first: next.value, rest, stream };
    }
  } catch (e) {
    stream?.close();
    throw asFailure(e, t);
  }
}

/** A stream opened and read up to its first output; what was read is `held`, to be sent first. */
export interface OpenStream {
  held: string;
  /** The rest of the stream, a block of whole lines per read (see UpstreamStream.blocks). */
  blocks: AsyncIterator<string>;
  stream: UpstreamStream;
}

/**
 * Opens a streamed call and reads it until model output appears. Everything before that can still fail over
 * to another channel: a bad status, an error event, a stream that ends or breaks or goes quiet first.
 */
export async function openStream(upstream: UpstreamClient, call: UpstreamCall, t: UpstreamTarget, reader: StreamReader, limits: Limits, signal?: CancelSignal): Promise<OpenStream> {
  let stream: UpstreamStream | null = null;
  try {
    stream = await upstream.stream({ ...requestOf(call, t, limits, signal), headers: { ...call.headers, accept: 'text/event-stream', ...t.headers }, idleMs: limits.idleMs });
    if (stream.status < 200 || stream.status >= 300) throw httpFailure(stream.status, await stream.text().catch(() => ''), t, stream.headers);
    const blocks = stream.blocks()[Symbol.asyncIterator]();
    let held = '';
    while (!reader.output) {
      const next = await blocks.next();
      if (next.done) throw new AttemptFailure('relay_upstream_bad_response', stream.status, 'the stream ended before any output', true, { kind: 'stream' });
      const read = readBlock(reader, next.value);
      if (read.error !== undefined) throw read.error;
      held += read.out;
    }
    return { held, blocks, stream };
  } catch (e) {
    stream?.close();
    throw asFailure(e, t);
  }
}
