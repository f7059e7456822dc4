import crypto from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { AppError } from '../../kit/http/errors.js';
import { deriveKey, hmac, safeEqual } from '../../kit/crypto/tokens.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { FlowsService } from '../flows/service.js';
import { canonicalContext, normaliseContext, wireScope, type WireScope } from './scopes.js';

interface ProofClaims {
  token_use: 'security_proof';
  sid: string;
  uv: number;
  method: string;
  scope: WireScope;
  ch: string;
  fid: string;
}

/**
 * Step-up security proofs: an HS256 token naming user, session, auth version, scope, method and the
 * HMAC of the action's context, backed by a single-use `security_proof` flow that is consumed on use.
 */
export function createProofs(ctx: AccountContext, flows: FlowsService) {
  const key = crypto.createSecretKey(deriveKey(ctx.secret, 'security-proof'));
  const contextKey = deriveKey(ctx.secret, 'verification-context');
  const contextHash = (context: Record<string, string>) => hmac(contextKey, canonicalContext(context));

  return {
    /** Issues a proof for one scope; the caller has already passed the method. */
    async issue(identity: AccountIdentity, scope: WireScope, context: Record<string, string>, method: string) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const ch = contextHash(context);
      const flow = await flows.create({
        purpose: 'security_proof',
        ttlSeconds: ctx.config.securityProofTtlSeconds,
        userId: identity.userId,
        sessionId: identity.sid,
        payload: { scope, method, ch, uv: identity.authVersion },
      });
      const claims: ProofClaims = { token_use: 'security_proof', sid: identity.sid, uv: identity.authVersion, method, scope, ch, fid: flow.token };
      const token = await new SignJWT({ ...claims })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(String(identity.userId))
        .setIssuedAt()
        .setExpirationTime(flow.expiresAt)
        .sign(key);
      return { proof_token: token, expires_at: flow.expiresAt, method, scope };
    },

    /** Checks every binding of a presented proof, then consumes it (once). */
    async verify(identity: AccountIdentity, scopeName: string, context: Record<string, unknown>, token: string | undefined) {
      if (!token) throw new AppError('SECURITY_PROOF_REQUIRED');
      const scope = wireScope(scopeName);
      let claims: ProofClaims & { sub?: string };
      try {
        claims = (await jwtVerify(token, key, { algorithms: ['HS256'], requiredClaims: ['exp', 'sub'] })).payload as any;
      } catch (e) {
        throw new AppError(e instanceof joseErrors.JWTExpired ? 'SECURITY_PROOF_EXPIRED' : 'SECURITY_PROOF_INVALID');
      }
      if (
        claims.token_use !== 'security_proof' ||
        claims.sub !== String(identity.userId) ||
        !identity.sid ||
        claims.sid !== identity.sid ||
        claims.uv !== identity.authVersion ||
        typeof claims.fid !== 'string' ||
        typeof claims.ch !== 'string'
      ) {
        throw new AppError('SECURITY_PROOF_INVALID');
      }
      if (claims.scope !== scope) throw new AppError('SECURITY_PROOF_SCOPE_MISMATCH');
      if (!safeEqual(claims.ch, contextHash(normaliseContext(scope, context)))) throw new AppError('SECURITY_PROOF_CONTEXT_MISMATCH');
      const flow = await flows.consume(claims.fid, 'security_proof');
      if (!flow) throw new AppError('SECURITY_PROOF_CONSUMED');
      if (flow.userId !== identity.userId || flow.sessionId !== identity.sid) throw new AppError('SECURITY_PROOF_INVALID');
      return { method: claims.method, scope };
    },
  };
}

export type Proofs = ReturnType<typeof createProofs>;
