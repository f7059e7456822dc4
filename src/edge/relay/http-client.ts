import { request, type Dispatcher } from 'undici';
import { RELAY_BUDGET_HEADER, RELAY_COUNT_SOURCE_HEADER, RELAY_SUMMARY_COMMENT, RELAY_SUMMARY_HEADER, type CountCall, type RelayAnswer, type RelayCall, type RelayPort, type RelayPrices, type RelayQuote, type RelaySummary } from '../../contract/relay.js';
import { errorCatalog } from '../../contract/errors/index.js';
import { MAX_LIFETIME_SECONDS, signingKey, signWorkloadToken, type WorkloadKey } from '../../kit/crypto/workload-token.js';
import { AppError } from '../../kit/http/errors.js';
import { formDataOf } from '../../kit/http/multipart.js';

const PATHS = {
  chat: '/relay/v1/chat/completions',
  responses: '/relay/v1/responses',
  embeddings: '/relay/v1/embeddings',
  anthropic: '/relay/v1/messages',
  completions: '/relay/v1/completions',
  moderations: '/relay/v1/moderations',
  rerank: '/relay/v1/rerank',
  images: '/relay/v1/images/generations',
  speech: '/relay/v1/audio/speech',
  transcriptions: '/relay/v1/audio/transcriptions',
} as const;

/** The relay route of a call's format (with an Anthropic caller's `?beta=true`); Gemini's names the model and the action in the path. */
function relayPath(call: Pick<RelayCall, 'format' | 'modelInPath' | 'betaQuery'>, counting = false): string {
  if (call.format !== 'gemini') return (counting ? `${PATHS[call.format]}/count_tokens` : PATHS[call.format]) + (call.betaQuery ? '?beta=true' : '');
  const target = call.modelInPath ?? { model: '', stream: false };
  const action = counting ? 'countTokens' : target.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return `/relay/v1beta/models/${encodeURIComponent(target.model)}:${action}`;
}
const ISSUER = 'edge';
const AUDIENCE = 'gateway-relay';
/** Who asks for the price list (a workload token names a caller; prices are the same for every one). */
const PRICES_SUBJECT = 'edge-prices';

/**
 * The relay of a gateway in another process, over its loopback internal API: each call signs a fresh
 * workload token (sub: the caller, group claim: the channel group). The gateway's refusals come back as
 * AppErrors with the relay's code and status, as the in-process relay throws them.
 */
export function httpRelay(opts: { url: string; tokenKey: string; timeoutMs: number }): RelayPort {
  const key: WorkloadKey = signingKey(opts.tokenKey);
  // One token per (caller, group) for half its lifetime: the gateway verifies a token it saw once for free.
  const tokens = new Map<string, { token: Promise<string>; renewAt: number }>();
  const token = (subject: string, group?: string) => {
    const id = `${subject}\u0000${group ?? ''}`;
    const hit = tokens.get(id);
    if (hit && hit.renewAt > Date.now()) return hit.token;
    const fresh = signWorkloadToken(key, { issuer: ISSUER, subject, audience: AUDIENCE, claims: group ? { group } : {} });
    if (tokens.size >= 10_000) tokens.clear();
    tokens.set(id, { token: fresh, renewAt: Date.now() + (MAX_LIFETIME_SECONDS * 1000) / 2 });
    return fresh;
  };

  async function failure(status: number, text: string, codeHeader?: unknown, detailHeader?: unknown): Promise<AppError> {
    // Anthropic- and Gemini-shaped errors carry the catalog code in a header only.
    let code = typeof codeHeader === 'string' && errorCatalog[codeHeader] ? codeHeader : 'relay_upstream_error';
    let detail = text.slice(0, 300);
    try {
      const e = JSON.parse(text).error;
      if (typeof e?.code === 'string' && errorCatalog[e.code]) code = e.code;
      if (typeof e?.message === 'string') detail = e.message;
    } catch {
      /* not JSON: the text is the detail */
    }
    // The relay's own detail, when it sent one, so the catalog message is not wrapped in itself.
    if (typeof detailHeader === 'string') detail = safeDecode(detailHeader) ?? detail;
    return new AppError(code, { params: { status, detail }, data: { status, summary: null } });
  }

  return {
    async relay(call: RelayCall): Promise<RelayAnswer> {
      // A call with files goes as the form it came in (undici sets its multipart content type).
      const form = call.files ? formDataOf(call.body, call.files) : null;
      const res = await request(opts.url + relayPath(call), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await token(call.caller.subject, call.caller.group)}`,
          ...(form ? {} : { 'content-type': 'application/json' }),
          'x-request-id': call.requestId,
          ...(call.budget !== undefined ? { [RELAY_BUDGET_HEADER]: String(call.budget) } : {}),
          ...(call.headers?.['user-agent'] ? { 'user-agent': call.headers['user-agent'] } : {}),
          ...call.vendorHeaders,
        },
        body: form ?? JSON.stringify(call.body),
        signal: call.signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      if (res.statusCode !== 200) throw await failure(res.statusCode, await res.body.text(), res.headers['x-relay-error-code'], res.headers['x-relay-error-detail']);
      const type = String(res.headers['content-type'] ?? '');
      if (String(res.headers.trailer ?? '').toLowerCase().includes(RELAY_SUMMARY_HEADER)) return bytesAnswer(res, type);
      if (!type.startsWith('text/event-stream')) {
        const header = String(res.headers[RELAY_SUMMARY_HEADER] ?? '');
        const summary = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as RelaySummary;
        return { kind: 'json', status: 200, body: await res.body.text(), summary };
      }
      let settle!: (s: RelaySummary) => void;
      let fail!: (e: Error) => void;
      const summary = new Promise<RelaySummary>((resolve, reject) => ((settle = resolve), (fail = reject)));
      summary.catch(() => {});
      // The text ahead of the summary comment (the stream's closing event, or at least its blank line) is
      // handed out after the summary settled, as the in-process relay does: the edge ends a stream only once
      // it is charged (calls/service.ts).
      async function* pieces(): AsyncGenerator<string> {
        let pending = '';
        let last = '';
        let trailer: string | null = null;
        const utf8 = new TextDecoder();
        try {
          for await (const chunk of res.body) {
            const text = utf8.decode(chunk as Buffer, { stream: true });
            if (trailer !== null) {
              trailer += text;
              continue;
            }
            pending += text;
            const at = pending.indexOf(RELAY_SUMMARY_COMMENT);
            if (at >= 0) {
              trailer = pending.slice(at + RELAY_SUMMARY_COMMENT.length);
              last = pending.slice(0, at);
              pending = '';
              continue;
            }
            // Everything but a tail that may be the start of the summary comment.
            const keep = Math.min(pending.length, RELAY_SUMMARY_COMMENT.length - 1);
            if (pending.length > keep) yield pending.slice(0, pending.length - keep);
            pending = pending.slice(pending.length - keep);
          }
          if (pending) yield pending;
          if (trailer === null) throw new Error('the relay stream ended without its summary');
          settle(JSON.parse(trailer.trim()) as RelaySummary);
          if (last) yield last;
        } catch (e) {
          fail(e as Error);
          throw e;
        } finally {
          // Abandoned by its consumer (return()) before the summary: the summary settles all the same, as a
          // failure, so the caller asks the gateway's log (a no-op once settled).
          fail(new Error('the relay stream was abandoned before its summary'));
          if (trailer === null) res.body.destroy();
        }
      }
      return { kind: 'stream', status: 200, contentType: type, pieces: pieces(), summary };
    },

    async quote(call) {
      const res = await request(`${opts.url}/relay/v1/quote`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(call.caller.subject, call.caller.group)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ format: call.format, body: call.body, ...(call.modelInPath ? { model_in_path: call.modelInPath } : {}) }),
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw await failure(res.statusCode, text, res.headers['x-relay-error-code']);
      return JSON.parse(text) as RelayQuote;
    },

    async countTokens(call: CountCall) {
      const res = await request(opts.url + relayPath(call, true), {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(call.caller.subject, call.caller.group)}`, 'content-type': 'application/json', 'x-request-id': call.requestId, ...call.vendorHeaders },
        body: JSON.stringify(call.body),
        signal: call.signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw await failure(res.statusCode, text, res.headers['x-relay-error-code'], res.headers['x-relay-error-detail']);
      const answer = JSON.parse(text) as { input_tokens?: unknown; totalTokens?: unknown };
      const tokens = call.format === 'gemini' ? answer.totalTokens : answer.input_tokens;
      if (typeof tokens !== 'number') throw new AppError('relay_internal_error', { data: { status: 502, summary: null } });
      return { tokens, source: res.headers[RELAY_COUNT_SOURCE_HEADER] === 'upstream' ? 'upstream' : 'tokenizer' };
    },

    async prices(models) {
      const res = await request(`${opts.url}/relay/v1/prices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(PRICES_SUBJECT)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ models }),
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw await failure(res.statusCode, text, res.headers['x-relay-error-code']);
      return JSON.parse(text) as RelayPrices;
    },

    async summaryOf(requestId, caller) {
      const res = await request(`${opts.url}/relay/v1/calls/${encodeURIComponent(requestId)}`, { headers: { authorization: `Bearer ${await token(caller.subject)}` }, headersTimeout: opts.timeoutMs, bodyTimeout: opts.timeoutMs });
      const text = await res.body.text();
      if (res.statusCode === 404) return null;
      if (res.statusCode !== 200) throw await failure(res.statusCode, text);
      return JSON.parse(text) as RelaySummary;
    },
  };
}

/** A bytes answer (audio, a transcription's text): its chunks as they come, its summary from the trailer after the last one. */
function bytesAnswer(res: Dispatcher.ResponseData, contentType: string): RelayAnswer {
  let settle!: (s: RelaySummary) => void;
  let fail!: (e: Error) => void;
  const summary = new Promise<RelaySummary>((resolve, reject) => ((settle = resolve), (fail = reject)));
  summary.catch(() => {});
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let read = false;
    try {
      for await (const chunk of res.body) yield chunk as Buffer;
      read = true;
      const trailer = res.trailers[RELAY_SUMMARY_HEADER];
      // Without its trailer (a proxy dropped it) the summary fails, and the caller asks the gateway's log.
      if (typeof trailer === 'string') settle(JSON.parse(Buffer.from(trailer, 'base64url').toString('utf8')) as RelaySummary);
    } catch (e) {
      fail(e as Error);
      throw e;
    } finally {
      fail(new Error('the relay answer was abandoned before its summary'));
      if (!read) res.body.destroy();
    }
  }
  return { kind: 'bytes', status: 200, contentType, chunks: chunks(), summary };
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
