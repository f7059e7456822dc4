/**
 * Removes secrets from text that came from outside (an upstream's error body, a socket message) before it
 * is stored, logged or returned. A secret is found by its identity, not its exact spelling: in any letter
 * case, without its vendor prefix (`sk-`, `sk-ant-api03-`, …), with any of its characters percent-encoded,
 * and base64- or base64url-encoded (at any alignment inside a longer encoded text). The word holding it (the
 * run of key characters around it) becomes `[redacted]`. Secrets shorter than 4 characters are not searched
 * for (they would redact ordinary words).
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const finder = finderOf(secrets);
  if (!finder) return text;
  finder.words.lastIndex = 0;
  return text.replace(finder.words, (word) => (finder.holds(word) ? '[redacted]' : word));
}

/** A short single-line excerpt of an outside text (for messages), secrets removed first. */
export function excerpt(text: string, secrets: readonly string[], max = 300): string {
  const clean = scrubSecrets(text, secrets).replace(/\s+/g, ' ').trim();
  return clean.length > max ? clean.slice(0, max) + '…' : clean;
}

const MIN_SECRET = 4;
/** A secret's part after its vendor prefix is searched on its own only when this long (else it could be a word). */
const MIN_CORE = 12;
/** One vendor prefix segment: a short lowercase word or version tag and `-` or `_` (sk-, ant-, api03-, proj-). */
const PREFIX_SEGMENT = /^[a-z][a-z0-9]{0,5}[-_]/i;
/** Characters of keys and of their encodings (percent, base64, base64url); a secret's own characters are added. */
const KEY_CHARS = 'A-Za-z0-9%+/=_.\\-';
/** Forms are looked up by their first characters: each position of a word costs one map lookup, whatever the number of secrets. */
const ANCHOR = 8;

interface Finder {
  /** Runs of key characters, one of which holds any secret written in any of its forms. */
  words: RegExp;
  holds(word: string): boolean;
}

/**
 * One finder per list of secrets, built on first use and kept as long as the list is (a target's list is
 * built once with the target, so its finder is too); lists with the same secrets (the targets of one
 * multi-key channel's keys) share one.
 */
const byList = new WeakMap<readonly string[], Finder | null>();
const bySecrets = new Map<string, Finder | null>();
const SHARED = 256;

function finderOf(secrets: readonly string[]): Finder | null {
  let f = byList.get(secrets);
  if (f === undefined) {
    const key = secrets.join('\u0000');
    f = bySecrets.get(key);
    if (f === undefined) {
      f = compile(secrets);
      if (bySecrets.size >= SHARED) bySecrets.delete(bySecrets.keys().next().value!);
      bySecrets.set(key, f);
    }
    byList.set(secrets, f);
  }
  return f;
}

function compile(secrets: readonly string[]): Finder | null {
  const forms = new Set<string>();
  const extra = new Set<string>();
  for (const s of secrets) {
    if (!s || s.length < MIN_SECRET) continue;
    for (const c of s) if (!/[\sA-Za-z0-9%+/=_.-]/.test(c)) extra.add(c);
    for (const text of withoutPrefixes(s)) {
      forms.add(text.toLowerCase());
      for (const b of base64Forms(text)) forms.add(b.toLowerCase());
    }
  }
  if (!forms.size) return null;
  const anchor = Math.min(ANCHOR, ...[...forms].map((f) => f.length));
  const index = new Map<string, string[]>();
  for (const f of forms) {
    const head = f.slice(0, anchor);
    const list = index.get(head);
    if (list) list.push(f);
    else index.set(head, [f]);
  }
  const escaped = [...extra].map((c) => c.replace(/[\\\]^-]/g, '\\$&')).join('');
  return {
    words: new RegExp(`[${KEY_CHARS}${escaped}]{${anchor},}`, 'gu'),
    holds(word) {
      const plain = percentDecoded(word).toLowerCase();
      for (let i = 0; i + anchor <= plain.length; i++) {
        const candidates = index.get(plain.slice(i, i + anchor));
        if (candidates?.some((f) => plain.startsWith(f, i))) return true;
      }
      return false;
    },
  };
}

/** The secret, and what is left of it after each vendor prefix segment while that is long enough to be its own. */
function withoutPrefixes(secret: string): string[] {
  const out = [secret];
  let rest = secret;
  for (let m = PREFIX_SEGMENT.exec(rest); m && rest.length - m[0].length >= MIN_CORE; m = PREFIX_SEGMENT.exec(rest)) {
    rest = rest.slice(m[0].length);
    out.push(rest);
  }
  return out;
}

/** %XX escapes decoded byte by byte (keys are ASCII); a malformed escape stays as it is. */
function percentDecoded(word: string): string {
  return word.includes('%') ? word.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : word;
}

/**
 * The text's base64 and base64url forms whole, and at the three byte alignments it can have inside a longer
 * encoded text: the encoded characters that depend on the secret's bytes alone (a few at each end depend on
 * its neighbours and are left out).
 */
function base64Forms(text: string): string[] {
  const bytes = Buffer.from(text);
  const out = [bytes.toString('base64')];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const stable = encoded.slice(offset ? 4 : 0, Math.floor((offset + bytes.length) / 3) * 4);
    if (stable.length >= ANCHOR) out.push(stable, stable.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}
