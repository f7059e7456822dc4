import { AppError } from '../../kit/http/errors.js';
import { CustomerRefusal, type CustomerHolder, type CustomerPort } from '../../contract/customer.js';

/** What a missing token or top-up code is called, by the kind of thing the route names. */
export type NotFoundCode = 'TOKEN_NOT_FOUND' | 'TOPUP_CODE_NOT_FOUND';

/** The catalog error of a refusal of the edge (src/contract/customer.ts); any other error is passed on. */
export function refusalError(e: unknown, notFound: NotFoundCode = 'TOKEN_NOT_FOUND'): unknown {
  if (!(e instanceof CustomerRefusal)) return e;
  switch (e.reason) {
    case 'not_found':
      return new AppError(notFound);
    case 'invalid':
      return new AppError('CUSTOMER_INVALID', { params: { detail: e.detail } });
    case 'key_already_shown':
      return new AppError('TOKEN_KEY_ALREADY_SHOWN');
    case 'code_invalid':
      // One answer for unknown, disabled, expired and used codes: a code cannot be probed.
      return new AppError('TOPUP_CODE_INVALID');
    case 'insufficient':
      return new AppError('QUOTA_BELOW_RESERVED', { params: { detail: e.detail } });
    case 'unavailable':
      return new AppError('EDGE_UNAVAILABLE');
  }
}

/**
 * The account's way to the edge's keys, wallets, usage and codes: `run` hands the port to one call and
 * turns the edge's refusals into catalog errors; without a port every call is EDGE_UNAVAILABLE (503).
 */
export function edgeAccess(holder: CustomerHolder) {
  return {
    /** The port, or null when this service cannot reach the edge. */
    get port(): CustomerPort | null {
      return holder.port;
    },

    async run<T>(call: (port: CustomerPort) => Promise<T>, notFound: NotFoundCode = 'TOKEN_NOT_FOUND'): Promise<T> {
      const port = holder.port;
      if (!port) throw new AppError('EDGE_UNAVAILABLE');
      try {
        return await call(port);
      } catch (e) {
        throw refusalError(e, notFound);
      }
    },
  };
}

export type EdgeAccess = ReturnType<typeof edgeAccess>;

/** Every error a customer route can answer from the edge itself. */
export const EDGE_ERRORS = ['EDGE_UNAVAILABLE', 'CUSTOMER_INVALID'] as const;

/**
 * A route that writes at the edge (a quota, a key switch, a new token, a redemption) can also answer the
 * edge's contention: a write still deadlocked after its retries, or whose lock wait timed out (503
 * SERVICE_UNAVAILABLE with Retry-After), the edge in this process or apart.
 */
export const EDGE_WRITE_ERRORS = [...EDGE_ERRORS, 'SERVICE_UNAVAILABLE'] as const;
