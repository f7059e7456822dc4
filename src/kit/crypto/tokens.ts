import crypto from 'node:crypto';

/** A random URL-safe token with `bytes` bytes of entropy (default 32 = 256 bits). */
export function randomToken(bytes = 32): string {
  return crypto.randomBytes(bytes).toString('base64url');
}

export function hmac(key: string | Buffer, data: string): string {
  return crypto.createHmac('sha256', key).update(data).digest('base64url');
}

export function sha256(data: string | Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

/** Derives an independent key for one purpose from a master secret. */
export function deriveKey(secret: string, purpose: string): Buffer {
  return crypto.createHmac('sha256', secret).update(`auth/${purpose}/v1`).digest();
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}
