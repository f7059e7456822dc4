/**
 * Removes secrets from text that came from outside (an upstream's error body, a socket message) before it
 * is stored, logged or returned: each secret, and its URL-encoded and base64 forms, becomes `[redacted]`.
 * Secrets shorter than 4 characters are not searched for (they would redact ordinary words).
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) {
    if (!s || s.length < 4) continue;
    for (const form of new Set([s, encodeURIComponent(s), Buffer.from(s).toString('base64')])) {
      out = out.split(form).join('[redacted]');
    }
  }
  return out;
}

/** A short single-line excerpt of an outside text (for messages), secrets removed first. */
export function excerpt(text: string, secrets: readonly string[], max = 300): string {
  const clean = scrubSecrets(text, secrets).replace(/\s+/g, ' ').trim();
  return clean.length > max ? clean.slice(0, max) + '…' : clean;
}
