import crypto from 'node:crypto';

/**
 * Developer credentials `svc_sk_<keyId>.<secret>`: keyId 22 characters (16 random bytes) and secret 43
 * characters (32 random bytes), both unpadded base64url. Only SHA-256(secret) is stored.
 */
export const CREDENTIAL_PREFIX = 'svc_sk_';
const FORMAT = /^svc_sk_([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

export function newCredential(): { keyId: string; secret: string; token: string } {
  // A keyId never starts with '-': on a command line (`edge key revoke <keyId>`) it would read as an option.
  let keyId: string;
  do keyId = crypto.randomBytes(16).toString('base64url');
  while (keyId.startsWith('-'));
  const secret = crypto.randomBytes(32).toString('base64url');
  return { keyId, secret, token: `${CREDENTIAL_PREFIX}${keyId}.${secret}` };
}

export function parseCredential(token: string): { keyId: string; secret: string } | null {
  const m = FORMAT.exec(token);
  return m ? { keyId: m[1]!, secret: m[2]! } : null;
}

export function secretHash(secret: string): Buffer {
  return crypto.createHash('sha256').update(secret, 'utf8').digest();
}

/** Constant-time comparison of SHA-256(secret) with a stored hex hash (a missing key compares against zeros). */
export function secretMatches(secret: string, storedHex: string | null): boolean {
  const given = secretHash(secret);
  const stored = storedHex && /^[0-9a-f]{64}$/.test(storedHex) ? Buffer.from(storedHex, 'hex') : Buffer.alloc(32);
  return crypto.timingSafeEqual(given, stored) && storedHex !== null;
}

/**
 * A key imported from new-api (`sk-` and 48 letters or digits) keeps working unchanged. It has no key id of
 * its own: its edge key id is derived from the key (a domain-separated SHA-256, so it is not a prefix of
 * the stored hash), and the stored hash is the SHA-256 of the whole key.
 */
const IMPORTED_FORMAT = /^sk-[A-Za-z0-9]{48}$/;

export function isImportedKey(token: string): boolean {
  return IMPORTED_FORMAT.test(token);
}

/** The key id of an imported key: 'n' and 21 base64url characters (never starting with '-'). */
export function importedKeyId(token: string): string {
  return 'n' + crypto.createHash('sha256').update(`edge-imported-key-id:${token}`, 'utf8').digest('base64url').slice(0, 21);
}

/** A key as every read shows it (new-api's MaskTokenKey): its first and last 4 characters around 10 asterisks. */
export function maskedKey(key: string): string {
  if (key.length <= 4) return '*'.repeat(key.length);
  if (key.length <= 8) return `${key.slice(0, 2)}****${key.slice(-2)}`;
  return `${key.slice(0, 4)}**********${key.slice(-4)}`;
}
