import fs from 'node:fs';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/**
 * Words of this product that make a password easy to guess (ASVS 6.1.2); operators add their own
 * (organisation and brand names) with PASSWORD_CONTEXT_WORDS.
 */
export const PRODUCT_WORDS = ['newapi', 'oneapi', 'admin', 'administrator', 'root', 'password', 'gateway'];

// The 5,000 most common passwords of 8 to 128 characters, lower-cased, most common first (from the
// MIT-licensed @zxcvbn-ts/language-common 4.1.3 frequency list). Read once, on first use.
let common: Set<string> | undefined;
function commonPasswords(): Set<string> {
  common ??= new Set(fs.readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8').split('\n').filter(Boolean));
  return common;
}

/** Letters only, lower-cased: "NewApi-2024!" and "newapi" are the same guess. */
function lettersOf(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}]/gu, '');
}

export interface PasswordContext {
  /** The account's username (registration, reset); a password that is the username plus digits or symbols is refused. */
  username?: string | null;
  /** PASSWORD_CONTEXT_WORDS of the deployment. */
  words?: readonly string[];
}

/**
 * Returns why a new password is refused, or null. Length counts characters (code points); there are no
 * composition rules. The password is checked exactly as given, only compared case-insensitively.
 */
export function passwordProblem(password: string, context: PasswordContext = {}): string | null {
  const n = [...password].length;
  if (n < PASSWORD_MIN) return `password must be at least ${PASSWORD_MIN} characters`;
  if (n > PASSWORD_MAX) return `password must be at most ${PASSWORD_MAX} characters`;
  if (commonPasswords().has(password.toLowerCase())) return 'password is one of the most common passwords';
  const letters = lettersOf(password);
  const guessable = [...PRODUCT_WORDS, ...(context.words ?? []), context.username ?? ''].map(lettersOf).filter((w) => w.length >= 3);
  if (guessable.includes(letters)) return 'password is too close to the username or the name of this service';
  return null;
}
