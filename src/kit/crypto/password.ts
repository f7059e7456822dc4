import { hash, verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';

/** OWASP parameters: argon2id, m=19456 KiB, t=2, p=1. */
// algorithm 2 = Argon2id (the package's const enum cannot be imported under isolatedModules).
const ARGON2 = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

// A real hash of a random value, so a login for an unknown user spends the same time as a known one.
let dummyHash: Promise<string> | undefined;
function dummy(): Promise<string> {
  dummyHash ??= hash('not-a-password-' + Math.random(), ARGON2);
  return dummyHash;
}

export interface PasswordCheck {
  valid: boolean;
  /** True when the stored hash should be replaced by a fresh argon2id hash. */
  needsRehash: boolean;
}

/**
 * Verifies a password against an argon2id hash or an imported bcrypt hash ($2a$/$2b$/$2y$).
 * A missing or unknown hash still spends one argon2id verification and answers invalid.
 */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<PasswordCheck> {
  if (stored && stored.startsWith('$argon2')) {
    const valid = await verify(stored, password).catch(() => false);
    return { valid, needsRehash: valid && !stored.startsWith('$argon2id$v=19$m=19456,t=2,p=1$') };
  }
  if (stored && /^\$2[aby]\$\d\d\$/.test(stored)) {
    const valid = await bcrypt.compare(password, stored).catch(() => false);
    return { valid, needsRehash: valid };
  }
  await verify(await dummy(), password).catch(() => false);
  return { valid: false, needsRehash: false };
}

/** Resolves once the dummy hash exists, so the first unknown-user login is not faster than others. */
export async function warmUpPasswordHashing(): Promise<void> {
  await dummy();
}
