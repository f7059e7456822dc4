import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { RelayCaller } from '../../contract/relay.js';
import type { Config } from '../../config/index.js';
import { AppError } from '../../kit/http/errors.js';
import { verifyWorkloadToken, WorkloadTokenError, type WorkloadKey } from '../../kit/crypto/workload-token.js';

export const RELAY_AUDIENCE = 'gateway-relay';
const MAX_REMEMBERED = 10_000;

declare module 'fastify' {
  interface FastifyRequest {
    relayCaller?: RelayCaller;
  }
}

/** Whether the TCP peer is this host (the socket's address: forwarded headers are never trusted here). */
function fromLoopback(req: FastifyRequest): boolean {
  const a = req.raw.socket.remoteAddress ?? '';
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/**
 * Authenticates a call of the relay's internal API: from the loopback interface only, with a workload token
 * (JWT, audience gateway-relay, a listed issuer, at most 60 s long). A staff token is not a workload token.
 * The token's `sub` names the caller and its optional `group` claim the channel group.
 */
export function workloadAuthenticator(config: Config) {
  const r = config.gateway.relay;
  const keys: WorkloadKey[] = [];
  if (r.tokenSecret) keys.push({ alg: 'HS256', secret: r.tokenSecret });
  if (r.tokenPublicKey) {
    const pem = r.tokenPublicKey.includes('-----BEGIN');
    keys.push({ alg: 'EdDSA', key: crypto.createPublicKey(pem ? r.tokenPublicKey : { key: JSON.parse(r.tokenPublicKey), format: 'jwk' }) });
  }
  // A caller sends one token for many calls: a verified token is remembered until it expires.
  const verified = new Map<string, { caller: RelayCaller; expiresAt: number }>();
  return async (req: FastifyRequest) => {
    if (!fromLoopback(req)) throw new AppError('relay_not_loopback');
    if (!keys.length) {
      req.log.warn('relay: a call of the internal API was refused: set GATEWAY_RELAY_TOKEN_SECRET or GATEWAY_RELAY_TOKEN_PUBLIC_KEY to turn it on');
      throw new AppError('relay_not_configured');
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) throw new AppError('relay_token_missing');
    const token = m[1]!;
    const known = verified.get(token);
    if (known && known.expiresAt > Date.now()) {
      req.relayCaller = known.caller;
      return;
    }
    try {
      const claims = await verifyWorkloadToken(token, { keys, audience: RELAY_AUDIENCE, issuers: r.tokenIssuers });
      const group = typeof claims.group === 'string' && claims.group ? claims.group.slice(0, 64) : r.defaultGroup;
      req.relayCaller = { issuer: claims.iss, subject: claims.sub.slice(0, 128), group };
      if (verified.size >= MAX_REMEMBERED) verified.delete(verified.keys().next().value!);
      verified.set(token, { caller: req.relayCaller, expiresAt: claims.exp! * 1000 });
    } catch (e) {
      if (e instanceof WorkloadTokenError) throw new AppError('relay_token_invalid', { params: { detail: e.message } });
      throw e;
    }
  };
}
