import type { FastifyRequest } from 'fastify';
import type { OperationSpec } from '../contract/types.js';
import { AppError } from '../kit/http/errors.js';
import type { RateLimiter } from '../kit/ratelimit/index.js';
import { CREDENTIAL_PREFIX, isImportedKey } from './keys/credentials.js';
import type { EdgeIdentity, KeyService } from './keys/service.js';
import { checkTokenAccess } from './keys/token-limits.js';
import { wireShapeOf } from './wire-errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The developer key's identity, set by edgeAuthenticator. */
    edgeIdentity?: EdgeIdentity;
  }
}

/**
 * The key of a request where its caller format's clients send it, besides `Authorization: Bearer`:
 * Anthropic's `x-api-key`, Google's `x-goog-api-key` or `?key=` (which win over the bearer, as in new-api);
 * the model list and model (GET /v1/models…) take any of them.
 * null: none there.
 */
function vendorKeyOf(req: FastifyRequest): string | null {
  const shape = wireShapeOf(req);
  const header = (name: string) => {
    const v = req.headers[name];
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
  };
  // The model list and model answer every vendor's client (models/routes.ts), as new-api's do.
  const models = req.method === 'GET' && /^\/v1\/models(\/|\?|$)/.test(req.url);
  const apiKey = header('x-api-key');
  if (shape === 'anthropic' || (models && apiKey)) return apiKey;
  if (shape !== 'gemini' && !models) return null;
  const query = (req.query as { key?: unknown } | undefined)?.key;
  return header('x-goog-api-key') ?? (typeof query === 'string' && query !== '' ? query : null);
}

/**
 * Authenticates an edge request: only `Authorization: Bearer svc_sk_<keyId>.<secret>` or an imported new-api
 * key (`sk-` and 48 letters or digits), or the same key where Anthropic's and Google's clients send it
 * (vendorKeyOf). Anything that looks like a customer session (a Cookie or X-Auth-Session header, a bearer
 * that is neither) is refused with `customer_session_not_accepted`, even beside a valid key. Every key of a
 * disabled account user is refused (403 user_disabled, new-api's answer to a banned user's token), read with
 * the key on every request so a disable stops the next call; an account
 * user's key is then refused when its token is disabled or expired (401) or the caller's address is outside
 * its allow_ips (403). Then the key's rate limit.
 * The internal customer API (auth `workload`) takes the account service's workload token instead (`workload`).
 */
export function edgeAuthenticator(keys: KeyService, limiter: RateLimiter, perMinute: number, workload: (req: FastifyRequest) => Promise<void>) {
  return async (req: FastifyRequest, spec: OperationSpec): Promise<void> => {
    if (spec.auth === 'none') return;
    if (spec.auth === 'workload') return workload(req);
    if (req.headers.cookie !== undefined || req.headers['x-auth-session'] !== undefined) throw new AppError('customer_session_not_accepted');
    const vendorKey = vendorKeyOf(req);
    const token = vendorKey ?? bearerOf(req.headers.authorization);
    if (!token.startsWith(CREDENTIAL_PREFIX) && !isImportedKey(token)) throw new AppError(vendorKey === null ? 'customer_session_not_accepted' : 'invalid_api_key');
    const identity = await keys.authenticate(token);
    if (!identity) throw new AppError('invalid_api_key');
    if (identity.ownerSuspended) throw new AppError('user_disabled');
    if (identity.token) checkTokenAccess(identity.token, req.ip);
    req.edgeIdentity = identity;
    const hit = await limiter.hit(`key:${identity.keyId}`, perMinute, 60);
    if (!hit.allowed) throw new AppError('rate_limited', { params: { seconds: hit.retryAfter }, headers: { 'Retry-After': String(hit.retryAfter) } });
  };
}

/** The key of `Authorization: Bearer <key>`: missing_api_key without one, invalid_api_key for another scheme. */
function bearerOf(header: string | undefined): string {
  if (header === undefined || header.trim() === '') throw new AppError('missing_api_key');
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw new AppError('invalid_api_key');
  return m[1]!;
}

export function identityOf(req: Pick<FastifyRequest, 'edgeIdentity'>): EdgeIdentity {
  if (!req.edgeIdentity) throw new AppError('invalid_api_key');
  return req.edgeIdentity;
}
