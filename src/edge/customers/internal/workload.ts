import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../config/index.js';
import { CUSTOMER_API_AUDIENCE, CUSTOMER_API_ISSUER } from '../../../contract/customer-wire.js';
import { AppError } from '../../../kit/http/errors.js';
import { verifyWorkloadToken, WorkloadTokenError, type WorkloadKey } from '../../../kit/crypto/workload-token.js';

const MAX_REMEMBERED = 1000;
/** Headers a forwarding proxy adds: such a request did not start on this host, whatever its TCP peer. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'forwarded', 'x-real-ip'];

/**
 * Whether the request comes straight from this host: a loopback TCP peer and no forwarding header. The
 * edge usually sits behind a reverse proxy on the same host, whose requests all arrive from loopback.
 */
function directLoopbackPeer(req: FastifyRequest): boolean {
  if (FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)) return false;
  const a = req.raw.socket.remoteAddress ?? '';
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/** The verifying keys of EDGE_CUSTOMER_TOKEN_SECRET and EDGE_CUSTOMER_TOKEN_PUBLIC_KEY. */
function verifyingKeys(config: Config): WorkloadKey[] {
  const c = config.edge.customerApi;
  const keys: WorkloadKey[] = [];
  if (c.tokenSecret) keys.push({ alg: 'HS256', secret: c.tokenSecret });
  if (c.tokenPublicKey) {
    const pem = c.tokenPublicKey.includes('-----BEGIN');
    keys.push({ alg: 'EdDSA', key: crypto.createPublicKey(pem ? c.tokenPublicKey : { key: JSON.parse(c.tokenPublicKey), format: 'jwk' }) });
  }
  return keys;
}

/**
 * Authenticates a call of the edge's internal customer API (ER01), as the gateway does its relay's: a direct
 * loopback peer with a workload token of the account service (audience edge-customer, issuer account, at
 * most 60 s long). Off until a key is configured. Refusals name the reason, never the token.
 */
export function customerApiAuthenticator(config: Config) {
  const keys = verifyingKeys(config);
  // The account service sends one token for many calls: a verified token is remembered until it expires.
  const verified = new Map<string, number>();
  return async (req: FastifyRequest) => {
    if (!directLoopbackPeer(req)) throw new AppError('customer_api_not_loopback');
    if (!keys.length) {
      req.log.warn('edge: a call of the internal customer API was refused: set EDGE_CUSTOMER_TOKEN_SECRET or EDGE_CUSTOMER_TOKEN_PUBLIC_KEY to turn it on');
      throw new AppError('customer_api_not_configured');
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) throw new AppError('customer_api_token_missing');
    const token = m[1]!;
    const expiresAt = verified.get(token);
    if (expiresAt !== undefined && expiresAt > Date.now()) return;
    try {
      const claims = await verifyWorkloadToken(token, { keys, audience: CUSTOMER_API_AUDIENCE, issuers: [CUSTOMER_API_ISSUER] });
      if (verified.size >= MAX_REMEMBERED) verified.delete(verified.keys().next().value!);
      verified.set(token, claims.exp! * 1000);
    } catch (e) {
      if (e instanceof WorkloadTokenError) throw new AppError('customer_api_token_invalid', { params: { detail: e.message } });
      throw e;
    }
  };
}
