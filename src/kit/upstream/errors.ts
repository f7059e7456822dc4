import { AddressRefusedError } from './address-policy.js';

/**
 * Why a call to an upstream failed. `over_budget`: the answer did not fit in what the shared ByteBudget had left
 * (the process's limit, not the upstream's fault).
 */
export type UpstreamFailure = 'refused' | 'timeout' | 'too_large' | 'unreachable' | 'bad_url' | 'over_budget';

/** A failure before or while talking to the upstream; `detail` never holds a URL path, header or secret. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailure,
    readonly detail: string,
  ) {
    super(`${kind}: ${detail}`);
    this.name = 'UpstreamError';
  }
}

/** Maps socket, DNS, abort and undici errors to an UpstreamError whose detail names no URL or secret. */
export function asUpstreamError(e: unknown, timedOutAfterMs: number | null): UpstreamError {
  if (e instanceof UpstreamError) return e;
  if (timedOutAfterMs !== null) return new UpstreamError('timeout', `no complete answer within ${timedOutAfterMs} ms`);
  const err = e as { name?: string; code?: string; cause?: unknown };
  const cause = (err.cause ?? {}) as { name?: string; code?: string; host?: string };
  if (e instanceof AddressRefusedError) return new UpstreamError('refused', e.message);
  if (cause instanceof AddressRefusedError) return new UpstreamError('refused', cause.message);
  const code = err.code ?? cause.code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return new UpstreamError('timeout', 'the upstream stopped answering');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new UpstreamError('unreachable', 'the host name does not resolve');
  if (code === 'ECONNREFUSED') return new UpstreamError('unreachable', 'connection refused');
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') return new UpstreamError('unreachable', 'the connection was closed before a complete answer');
  if (code === 'UND_ERR_INVALID_ARG' || err.name === 'InvalidArgumentError') return new UpstreamError('bad_url', 'invalid request to the upstream');
  return new UpstreamError('unreachable', code ? `connection failed (${code})` : 'connection failed');
}
