import crypto from 'node:crypto';
import { deriveKey } from '../../kit/crypto/tokens.js';

const ISSUER = 'new-api';
const AUDIENCE = 'new-api-dashboard';
const LEEWAY_SECONDS = 5;
const VERIFIED_CACHE_SIZE = 10_000;
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface AccessClaims {
  userId: number;
  sid: string;
  uv: number;
  sv: number;
  exp: number;
}

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: 'expired' | 'invalid' };

type Failed = Extract<VerifyResult, { ok: false }>;
const INVALID: Failed = { ok: false, reason: 'invalid' };
const EXPIRED: Failed = { ok: false, reason: 'expired' };

function jsonObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * HS256 access tokens of browser sessions, signed with a key derived for this purpose only. Signed and
 * verified synchronously with node:crypto (WebCrypto through jose cost ~15 % of an authenticated read);
 * the checks are jose's jwtVerify with {algorithms: HS256, issuer, audience, clockTolerance: 5 s,
 * requiredClaims: exp, sub, sid}, in the same order, and stricter on the header (only alg HS256 and an
 * optional typ JWT).
 */
export function createAccessTokens(secret: string, ttlSeconds: number) {
  const key = crypto.createSecretKey(deriveKey(secret, 'access'));
  const mac = (signingInput: string) => crypto.createHmac('sha256', key).update(signingInput).digest('base64url');

  // Tokens that passed every check, with their claims: a hit skips the HMAC and JSON parsing but
  // re-checks the time claims. Failures are never cached. Bounded; the oldest entry goes first.
  const verified = new Map<string, { claims: AccessClaims; nbf: number }>();

  /** To ignore expiry (logout with an expired token), the token is checked as of just before it expired. */
  function verify(token: string, opts: { ignoreExpiry?: boolean } = {}): Promise<VerifyResult> {
    const hit = opts.ignoreExpiry ? undefined : verified.get(token);
    if (hit) {
      const now = Math.floor(Date.now() / 1000);
      if (hit.nbf > now + LEEWAY_SECONDS) return Promise.resolve(INVALID);
      if (hit.claims.exp > now - LEEWAY_SECONDS) return Promise.resolve({ ok: true, claims: { ...hit.claims } });
      verified.delete(token);
      return Promise.resolve(EXPIRED);
    }
    const result = verifySync(token, opts);
    if (!result.ok) return Promise.resolve(result);
    if (!opts.ignoreExpiry) {
      verified.set(token, { claims: { ...result.claims }, nbf: result.nbf });
      if (verified.size > VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
    }
    return Promise.resolve({ ok: true, claims: result.claims });
  }

  function verifySync(token: string, opts: { ignoreExpiry?: boolean }): Failed | { ok: true; claims: AccessClaims; nbf: number } {
    if (typeof token !== 'string' || !JWT_SHAPE.test(token)) return INVALID;
    const [h, p, s] = token.split('.') as [string, string, string];
    const expected = Buffer.from(mac(`${h}.${p}`));
    const given = Buffer.from(s);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return INVALID;

    const header = jsonObject(h);
    if (!header || header.alg !== 'HS256') return INVALID;
    for (const name of Object.keys(header)) {
      if (name !== 'alg' && !(name === 'typ' && header.typ === 'JWT')) return INVALID;
    }
    const c = jsonObject(p);
    if (!c) return INVALID;

    let nowMs = Date.now();
    if (opts.ignoreExpiry && typeof c.exp === 'number') nowMs = Math.min(nowMs, (c.exp - 1) * 1000);
    const now = Math.floor(nowMs / 1000);

    for (const claim of ['iss', 'aud', 'exp', 'sub', 'sid']) if (!(claim in c)) return INVALID;
    if (c.iss !== ISSUER) return INVALID;
    if (!(c.aud === AUDIENCE || (Array.isArray(c.aud) && c.aud.includes(AUDIENCE)))) return INVALID;
    if (c.iat !== undefined && typeof c.iat !== 'number') return INVALID;
    if (c.nbf !== undefined && (typeof c.nbf !== 'number' || c.nbf > now + LEEWAY_SECONDS)) return INVALID;
    if (typeof c.exp !== 'number') return INVALID;
    if (c.exp <= now - LEEWAY_SECONDS) return EXPIRED;

    if (c.token_use !== 'access') return INVALID;
    const userId = Number(c.sub);
    if (typeof c.sub !== 'string' || !Number.isSafeInteger(userId) || userId <= 0 || typeof c.sid !== 'string') return INVALID;
    const claims = { userId, sid: c.sid, uv: Number(c.uv), sv: Number(c.sv), exp: c.exp };
    return { ok: true, claims, nbf: typeof c.nbf === 'number' ? c.nbf : -Infinity };
  }

  return {
    ttlSeconds,
    async sign(c: Omit<AccessClaims, 'exp'>): Promise<{ token: string; expiresAt: number }> {
      const now = Math.floor(Date.now() / 1000);
      const expiresAt = now + ttlSeconds;
      const payload = {
        token_use: 'access',
        sid: c.sid,
        uv: c.uv,
        sv: c.sv,
        iss: ISSUER,
        aud: AUDIENCE,
        sub: String(c.userId),
        jti: crypto.randomUUID(),
        iat: now,
        nbf: now - LEEWAY_SECONDS,
        exp: expiresAt,
      };
      const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
      return { token: `${signingInput}.${mac(signingInput)}`, expiresAt };
    },
    verify,
    /** True when the string has the shape of a JWT (three dot-separated parts). */
    looksLikeJwt(token: string): boolean {
      return JWT_SHAPE.test(token);
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
