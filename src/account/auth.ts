import type { FastifyRequest } from 'fastify';
import { AppError } from '../kit/http/errors.js';
import type { OperationSpec } from '../contract/types.js';
import { ROLE } from './db.js';
import { accountOf, type AccountIdentity } from './context.js';
import { bearerOf } from './sessions/http.js';
import type { SessionsService } from './sessions/service.js';

/** Authenticates an account request for its auth class (SPEC's Authentication table). */
export function accountAuthenticator(sessions: Pick<SessionsService, 'authenticate'>) {
  return async (req: FastifyRequest, spec: OperationSpec): Promise<void> => {
    if (spec.auth === 'none') return;
    const credential = bearerOf(req);
    if (!credential) {
      if (spec.auth === 'optional') return;
      throw new AppError('AUTH_UNAUTHORIZED');
    }
    const identity = await sessions.authenticate(credential);
    if (accountOf(req).config.explicitIdentity) {
      const header = req.headers['new-api-user'];
      if (typeof header !== 'string' || header.trim() !== String(identity.userId)) throw new AppError('AUTH_EXPLICIT_IDENTITY');
    }
    if (spec.auth === 'browser' && !identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
    if (spec.auth === 'admin' && identity.role < ROLE.admin) throw new AppError('AUTH_INSUFFICIENT_PRIVILEGE');
    if (spec.auth === 'root' && identity.role < ROLE.root) throw new AppError('AUTH_INSUFFICIENT_PRIVILEGE');
    req.accountIdentity = identity;
  };
}

/** The authenticated caller; only call from operations whose auth class guarantees one. */
export function identityOf(req: FastifyRequest): AccountIdentity {
  if (!req.accountIdentity) throw new AppError('AUTH_UNAUTHORIZED');
  return req.accountIdentity;
}

function originOfUrl(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Cookie endpoints (A23, A24) accept only requests whose Origin, or Referer when Origin is absent, is
 * the service's own origin or one listed in SESSION_TRUSTED_ORIGINS. Always on (see the ledger).
 */
export async function originGuard(req: FastifyRequest): Promise<void> {
  const ctx = accountOf(req);
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  let presented: string | null = null;
  if (typeof origin === 'string' && origin !== '') {
    presented = origin.includes(',') ? null : originOfUrl(origin);
    if (presented !== origin.replace(/\/$/, '')) presented = null;
  } else if (typeof referer === 'string' && referer !== '') {
    presented = originOfUrl(referer);
  }
  const own = `${req.protocol}://${req.host}`;
  if (presented && (presented === own || ctx.config.sessionTrustedOrigins.includes(presented))) return;
  throw new AppError('AUTH_ORIGIN_FORBIDDEN');
}
