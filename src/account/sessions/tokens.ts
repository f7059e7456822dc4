import crypto from 'node:crypto';
import { SignJWT, decodeJwt, jwtVerify, errors as joseErrors } from 'jose';
import { deriveKey } from '../../kit/crypto/tokens.js';

const ISSUER = 'new-api';
const AUDIENCE = 'new-api-dashboard';

export interface AccessClaims {
  userId: number;
  sid: string;
  uv: number;
  sv: number;
  exp: number;
}

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: 'expired' | 'invalid' };

/** HS256 access tokens of browser sessions, signed with a key derived for this purpose only. */
export function createAccessTokens(secret: string, ttlSeconds: number) {
  // A WebCrypto key imported once: given a KeyObject, jose re-imports it on every sign and verify.
  const cryptoKey = crypto.webcrypto.subtle.importKey('raw', deriveKey(secret, 'access'), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);

  async function verify(token: string, opts: { ignoreExpiry?: boolean } = {}): Promise<VerifyResult> {
    try {
      // To ignore expiry (logout with an expired token), verify as of just before the token expired.
      const at = opts.ignoreExpiry ? Math.min(Date.now(), (Number(decodeJwt(token).exp) - 1) * 1000) : undefined;
      const { payload } = await jwtVerify(token, await cryptoKey, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
        clockTolerance: 5,
        requiredClaims: ['exp', 'sub', 'sid'],
        ...(at !== undefined && Number.isFinite(at) ? { currentDate: new Date(at) } : {}),
      });
      if (payload.token_use !== 'access') return { ok: false, reason: 'invalid' };
      const userId = Number(payload.sub);
      if (!Number.isSafeInteger(userId) || userId <= 0 || typeof payload.sid !== 'string') {
        return { ok: false, reason: 'invalid' };
      }
      return {
        ok: true,
        claims: { userId, sid: payload.sid, uv: Number(payload.uv), sv: Number(payload.sv), exp: payload.exp! },
      };
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      return { ok: false, reason: 'invalid' };
    }
  }

  return {
    ttlSeconds,
    async sign(c: Omit<AccessClaims, 'exp'>): Promise<{ token: string; expiresAt: number }> {
      const now = Math.floor(Date.now() / 1000);
      const expiresAt = now + ttlSeconds;
      const token = await new SignJWT({ token_use: 'access', sid: c.sid, uv: c.uv, sv: c.sv })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject(String(c.userId))
        .setJti(crypto.randomUUID())
        .setIssuedAt(now)
        .setNotBefore(now - 5)
        .setExpirationTime(expiresAt)
        .sign(await cryptoKey);
      return { token, expiresAt };
    },
    verify,
    /** True when the string has the shape of a JWT (three dot-separated parts). */
    looksLikeJwt(token: string): boolean {
      return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
