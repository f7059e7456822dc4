import crypto from 'node:crypto';
import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';

/**
 * Short-lived workload tokens between deployables: JWTs signed with HS256 (a shared secret) or EdDSA
 * (Ed25519), at most MAX_LIFETIME_SECONDS long, for one audience, from a listed issuer.
 */
export const MAX_LIFETIME_SECONDS = 60;
const CLOCK_TOLERANCE_SECONDS = 5;

export type WorkloadKey = { alg: 'HS256'; secret: string } | { alg: 'EdDSA'; key: crypto.KeyObject };

export interface WorkloadClaims extends JWTPayload {
  iss: string;
  sub: string;
  aud: string;
}

/** The signing key of a caller: HS256 from a shared secret, or EdDSA from an Ed25519 private key (PEM). */
export function signingKey(secretOrPem: string): WorkloadKey {
  return secretOrPem.includes('-----BEGIN') ? { alg: 'EdDSA', key: crypto.createPrivateKey(secretOrPem) } : { alg: 'HS256', secret: secretOrPem };
}

const material = new WeakMap<WorkloadKey, crypto.KeyObject>();

/** The key as jose uses it, made once per key (importing it is most of a verification's cost). */
function keyMaterial(k: WorkloadKey): crypto.KeyObject {
  let m = material.get(k);
  if (!m) material.set(k, (m = k.alg === 'HS256' ? crypto.createSecretKey(Buffer.from(k.secret, 'utf8')) : k.key));
  return m;
}

export async function signWorkloadToken(k: WorkloadKey, c: { issuer: string; subject: string; audience: string; ttlSeconds?: number; claims?: Record<string, unknown> }): Promise<string> {
  const ttl = Math.min(c.ttlSeconds ?? MAX_LIFETIME_SECONDS, MAX_LIFETIME_SECONDS);
  return new SignJWT({ ...c.claims })
    .setProtectedHeader({ alg: k.alg, typ: 'JWT' })
    .setIssuer(c.issuer)
    .setSubject(c.subject)
    .setAudience(c.audience)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttl)
    .setJti(crypto.randomUUID())
    .sign(keyMaterial(k));
}

export class WorkloadTokenError extends Error {}

/**
 * Verifies a token against the keys (any may match), the audience and the issuers. Refuses tokens without
 * exp, iat or sub, and tokens that live longer than MAX_LIFETIME_SECONDS. The error message names the
 * reason and never repeats the token.
 */
export async function verifyWorkloadToken(token: string, opts: { keys: WorkloadKey[]; audience: string; issuers: string[] }): Promise<WorkloadClaims> {
  let last: unknown;
  for (const k of opts.keys) {
    try {
      const { payload } = await jwtVerify(token, keyMaterial(k), {
        algorithms: [k.alg],
        audience: opts.audience,
        issuer: opts.issuers,
        requiredClaims: ['exp', 'iat', 'sub'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      });
      if (payload.exp! - payload.iat! > MAX_LIFETIME_SECONDS) throw new WorkloadTokenError(`lifetime over ${MAX_LIFETIME_SECONDS} s`);
      if (payload.iat! > Math.floor(Date.now() / 1000) + CLOCK_TOLERANCE_SECONDS) throw new WorkloadTokenError('issued in the future');
      return payload as WorkloadClaims;
    } catch (e) {
      last = e;
    }
  }
  throw new WorkloadTokenError(reason(last));
}

function reason(e: unknown): string {
  if (e instanceof WorkloadTokenError) return e.message;
  if (e instanceof errors.JWTExpired) return 'expired';
  if (e instanceof errors.JWTClaimValidationFailed) return `claim ${e.claim} is not accepted`;
  if (e instanceof errors.JOSEAlgNotAllowed) return 'algorithm not accepted';
  if (e instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
  if (e instanceof errors.JWTInvalid || e instanceof errors.JWSInvalid) return 'not a JWT';
  return 'not verifiable';
}
