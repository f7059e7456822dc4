import crypto from 'node:crypto';

/**
 * Standard Webhooks signing: the secret is `whsec_<base64 key>`; the signature of a delivery is
 * `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`.
 */
export const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return 'v1,' + crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** A traceparent for an outgoing delivery: the event's trace and flags, a new parent (span) id. */
export function childTraceparent(traceparent: string | null): string | null {
  if (!traceparent) return null;
  const [version, traceId, , flags] = traceparent.split('-');
  return `${version}-${traceId}-${crypto.randomBytes(8).toString('hex')}-${flags}`;
}
