import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

/** Who may read /metrics and /api/openapi.json (OPS_TOKEN, TRUST_PROXY; docs/security.md). */
export interface OpsAccess {
  /** When set, the only way in: `Authorization: Bearer <token>`, from any peer (loopback included). */
  token: string;
  /** A proxy forwards the requests (TRUST_PROXY): a loopback peer may then be anyone on the internet. */
  behindProxy: boolean;
}

/** Headers a forwarding proxy adds: a request carrying one did not start on this host. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip'];

/** Whether the TCP peer is this host and nothing says it forwards someone else's request. */
function directLoopbackPeer(req: FastifyRequest, behindProxy: boolean): boolean {
  if (behindProxy || FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)) return false;
  const a = req.raw.socket.remoteAddress ?? '';
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

const digest = (s: string) => crypto.createHash('sha256').update(s).digest();

/**
 * A preHandler admitting a request to an ops endpoint: with a token, a request bearing it (401
 * OPS_TOKEN_REQUIRED otherwise); without one, a direct loopback peer only (403 OPS_LOOPBACK_ONLY otherwise).
 */
export function opsAccessGuard(access: OpsAccess) {
  const expected = access.token ? digest(access.token) : null;
  return async (req: FastifyRequest) => {
    if (expected) {
      const given = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
      if (given && crypto.timingSafeEqual(digest(given), expected)) return;
      throw new AppError('OPS_TOKEN_REQUIRED', { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    if (!directLoopbackPeer(req, access.behindProxy)) throw new AppError('OPS_LOOPBACK_ONLY');
  };
}
