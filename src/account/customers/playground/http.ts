import { request } from 'undici';
import type { Readable } from 'node:stream';
import { CustomerRefusal, type ChatError, type CustomerPort, type PlaygroundAnswer } from '../../../contract/customer.js';
import { CUSTOMER_PLAYGROUND_PATH, refusalReasonOf } from '../../../contract/customer-wire.js';

export interface PlaygroundOverHttp {
  /** The edge listener's origin. */
  url: string;
  /** A workload token of this service for the edge's internal API. */
  token(): Promise<string>;
  /** The refusal for an edge that cannot serve the call (logged by the caller's port). */
  unavailable(method: string, cause: string): CustomerRefusal;
  /** The longest wait for the answer's head, and between two pieces of it. */
  timeoutMs: number;
}

/** Codes of the edge's internal API itself (its token, its switch, its routes): this service's setup, not the call. */
const LINK_FAILURE = /^(customer_api_|unknown_route$|method_not_allowed$|api_not_implemented$)/;

async function* textOf(body: Readable): AsyncGenerator<string> {
  body.setEncoding('utf8');
  try {
    // Leaving the loop early (the browser went away) destroys the body, which ends the edge's call.
    for await (const piece of body) yield piece as string;
  } catch {
    // The edge's connection broke off: the stream ends here, as a broken upstream's does (the edge settles the call).
  }
}

/**
 * The playground chat over the edge's ER02: the completion, the event stream piece by piece (pulled at the
 * browser's pace), or the edge's OpenAI-shaped refusal with its status, passed on as they came. An edge that
 * cannot be reached, or refuses this service, is CustomerRefusal('unavailable').
 */
export function playgroundOverHttp(o: PlaygroundOverHttp): CustomerPort['playgroundChat'] {
  return async ({ signal, lang, ...call }): Promise<PlaygroundAnswer> => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${o.url}${CUSTOMER_PLAYGROUND_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await o.token()}`, 'content-type': 'application/json', 'accept-language': lang },
        body: JSON.stringify(call),
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        signal,
      });
    } catch (e) {
      if (signal.aborted) throw e;
      const err = e as { code?: unknown; name?: unknown };
      throw o.unavailable('playgroundChat', typeof err.code === 'string' ? err.code : String(err.name ?? 'transport error'));
    }
    const type = String(res.headers['content-type'] ?? '');
    if (res.statusCode === 200 && type.startsWith('text/event-stream')) return { kind: 'stream', contentType: type, pieces: textOf(res.body) };
    const text = await res.body.text();
    if (res.statusCode === 200) return { kind: 'json', body: text };
    let error: Partial<ChatError> & { detail?: unknown } = {};
    try {
      error = JSON.parse(text)?.error ?? {};
    } catch {
      // not the edge's error body: below
    }
    const code = typeof error.code === 'string' ? error.code : '';
    const reason = refusalReasonOf(code);
    if (reason && reason !== 'unavailable') throw new CustomerRefusal(reason, typeof error.detail === 'string' ? error.detail : '');
    if (!code || reason || LINK_FAILURE.test(code) || typeof error.message !== 'string') throw o.unavailable('playgroundChat', `HTTP ${res.statusCode} ${code || 'without a code'}`);
    const retryAfter = Number(res.headers['retry-after']);
    const refused = { kind: 'refused' as const, status: res.statusCode, error: { message: error.message, type: String(error.type ?? ''), code, param: typeof error.param === 'string' ? error.param : null } };
    return Number.isSafeInteger(retryAfter) && retryAfter >= 0 ? { ...refused, retryAfter } : refused;
  };
}
