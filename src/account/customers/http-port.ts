import type { Logger } from 'pino';
import { request } from 'undici';
import type { Config } from '../../config/index.js';
import { CustomerRefusal, type CustomerPort } from '../../contract/customer.js';
import { CUSTOMER_API_AUDIENCE, CUSTOMER_API_ISSUER, CUSTOMER_API_PATH, CUSTOMER_PORT_WIRE, refusalReasonOf, type CustomerMethod } from '../../contract/customer-wire.js';
import { AppError } from '../../kit/http/errors.js';
import { playgroundOverHttp } from './playground/http.js';
import { MAX_LIFETIME_SECONDS, signingKey, signWorkloadToken, type WorkloadKey } from '../../kit/crypto/workload-token.js';

export interface HttpCustomerPortOptions {
  /** The edge listener's origin (ACCOUNT_EDGE_URL). */
  url: string;
  /** HS256 secret or Ed25519 private key (PEM) signing the workload tokens (ACCOUNT_EDGE_TOKEN_KEY). */
  tokenKey: string;
  /** The longest one call may take, connect to last byte. */
  timeoutMs: number;
  /** The longest a playground chat waits for its answer's head, and between two pieces of a stream (default 15 minutes, the edge's run timeout). */
  chatTimeoutMs?: number;
  log: Logger;
}

/**
 * The edge's customer port in another process, over its internal API (ER01, src/contract/customer-wire.ts;
 * the playground chat over ER02) with a workload token of this service. The edge's refusals come back as
 * the CustomerRefusal it threw, its contention as the SERVICE_UNAVAILABLE it threw (Retry-After kept); a
 * failure to reach it, a timeout, an answer that is not one, or the edge refusing this service's token are
 * CustomerRefusal('unavailable') (the cause is logged, never the token).
 */
export function httpCustomerPort(opts: HttpCustomerPortOptions): CustomerPort {
  const key: WorkloadKey = signingKey(opts.tokenKey);
  // One token for half its lifetime: the edge verifies a token it saw once for free.
  let cached: { token: Promise<string>; renewAt: number } | null = null;
  const token = () => {
    if (cached && cached.renewAt > Date.now()) return cached.token;
    const fresh = signWorkloadToken(key, { issuer: CUSTOMER_API_ISSUER, subject: 'account', audience: CUSTOMER_API_AUDIENCE });
    cached = { token: fresh, renewAt: Date.now() + (MAX_LIFETIME_SECONDS * 1000) / 2 };
    return fresh;
  };

  // The edge refusing this service's token, off, unreachable or failing: the cause is a setting or the edge's log.
  const unavailable = (method: string, cause: string) => {
    opts.log.warn({ method, cause }, 'account: the edge customer API could not serve a call (check ACCOUNT_EDGE_URL, ACCOUNT_EDGE_TOKEN_KEY and the edge\'s EDGE_CUSTOMER_TOKEN_SECRET)');
    return new CustomerRefusal('unavailable', `the edge could not serve ${method}: ${cause}`);
  };

  async function call(method: CustomerMethod, args: unknown[]): Promise<unknown> {
    let status: number;
    let text: string;
    let retryAfter: unknown;
    try {
      const res = await request(`${opts.url}${CUSTOMER_API_PATH}/${method}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json', 'accept-language': 'en' },
        body: JSON.stringify({ args }),
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (e) {
      const err = e as { code?: unknown; name?: unknown };
      throw unavailable(method, typeof err.code === 'string' ? err.code : String(err.name ?? 'transport error'));
    }
    let answer: { result?: unknown; error?: { code?: unknown; message?: unknown; detail?: unknown } };
    try {
      answer = JSON.parse(text);
    } catch {
      throw unavailable(method, `HTTP ${status} without a JSON answer`);
    }
    if (status === 200) {
      const result = answer?.result;
      if (!('map' in CUSTOMER_PORT_WIRE[method])) return result;
      if (!Array.isArray(result)) throw unavailable(method, 'the answer is not a list of entries');
      return new Map(result as [unknown, unknown][]);
    }
    const code = typeof answer?.error?.code === 'string' ? answer.error.code : '';
    const reason = refusalReasonOf(code);
    if (reason) {
      const detail = typeof answer.error?.detail === 'string' ? answer.error.detail : '';
      if (reason === 'unavailable') opts.log.warn({ method, detail }, 'account: the edge could not serve a customer call');
      throw new CustomerRefusal(reason, detail);
    }
    // The edge's write met contention (transactionWithRetry): answered as the port in process answers it.
    if (code === 'service_unavailable') throw new AppError('SERVICE_UNAVAILABLE', { headers: { 'Retry-After': typeof retryAfter === 'string' ? retryAfter : '1' } });
    // Arguments the edge's wire schema refuses: a bad value, as the port in process refuses one (the message
    // names where, never the values).
    if (code === 'customer_api_bad_arguments') throw new CustomerRefusal('invalid', typeof answer.error?.message === 'string' ? answer.error.message : method);
    throw unavailable(method, `HTTP ${status} ${code || 'without a code'}`);
  }

  const port: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const method of Object.keys(CUSTOMER_PORT_WIRE) as CustomerMethod[]) port[method] = (...args) => call(method, args);
  port.playgroundChat = playgroundOverHttp({ url: opts.url, token, unavailable, timeoutMs: opts.chatTimeoutMs ?? 900_000 });
  return port as unknown as CustomerPort;
}

/**
 * The customer port the account service uses when the edge is not in this process: over ACCOUNT_EDGE_URL
 * when it is set, else none (the customer API answers EDGE_UNAVAILABLE; a warning says so at start-up).
 */
export function remoteCustomerPort(config: Config, log: Logger): CustomerPort | null {
  const edge = config.account.edge;
  if (edge.url) return httpCustomerPort({ url: edge.url, tokenKey: edge.tokenKey, timeoutMs: edge.timeoutMs, chatTimeoutMs: config.edge.runs.timeoutMs, log });
  log.warn('account: no edge for keys, balances and usage (run the edge in the same process, or set ACCOUNT_EDGE_URL and ACCOUNT_EDGE_TOKEN_KEY): the customer API answers 503');
  return null;
}
