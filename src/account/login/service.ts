import { AppError } from '../../kit/http/errors.js';
import { verifyPassword, hashPassword } from '../../kit/crypto/password.js';
import { USER_STATUS } from '../db.js';
import { usersStore, type UserRow } from '../users/store.js';
import type { ClientInfo, IssuedSession } from '../sessions/service.js';
import type { AccountContext } from '../context.js';
import { createPasswordEncryption } from './password-encryption.js';

export interface PasswordLoginInput {
  username?: string;
  password?: string;
  password_encrypted?: string;
  encryption_key_id?: string;
}

export type LoginOutcome = { kind: 'session'; issued: IssuedSession } | { kind: 'challenge'; data: Record<string, unknown> };

export function createLoginService(ctx: AccountContext) {
  const { db } = ctx.database;
  const encryption = createPasswordEncryption(ctx);

  /**
   * The one exit every login method shares after its first factor: the second-factor branch when the
   * user has one, otherwise a new session under the caps.
   */
  async function completeLogin(user: UserRow, loginMethod: string, client: ClientInfo): Promise<LoginOutcome> {
    const challenge = ctx.hooks.secondFactor ? await ctx.hooks.secondFactor(user, loginMethod) : null;
    if (challenge) return challenge;
    return { kind: 'session', issued: await ctx.services.sessions.issue(user, loginMethod, client) };
  }

  /** Returns the plain password from the request, decrypting it when encryption is on; null if unusable. */
  async function passwordFrom(input: PasswordLoginInput): Promise<string | null> {
    if (!ctx.config.passwordLoginEncryptionEnabled) return input.password || null;
    if (!input.password_encrypted || !input.encryption_key_id) {
      throw new AppError('LOGIN_INVALID_PARAMETERS');
    }
    return encryption.decrypt(input.password_encrypted, input.encryption_key_id);
  }

  return {
    encryption,
    completeLogin,
    passwordFrom,

    /** A25: username or email with a password (plain or client-encrypted). */
    async passwordLogin(input: PasswordLoginInput, client: ClientInfo): Promise<LoginOutcome> {
      if (!ctx.config.passwordLoginEnabled) throw new AppError('PASSWORD_LOGIN_DISABLED');
      const name = (input.username ?? '').trim();
      if (!name) throw new AppError('LOGIN_INVALID_PARAMETERS');
      if (!ctx.config.passwordLoginEncryptionEnabled && !input.password) throw new AppError('LOGIN_INVALID_PARAMETERS');
      const password = await passwordFrom(input);
      const user = await usersStore.byLoginName(db, name);
      // Same hashing work whether or not the user exists or the ciphertext opened.
      const check = await verifyPassword(password === null ? null : user?.password_hash, password ?? '');
      if (!user || !check.valid || user.status !== USER_STATUS.enabled) throw new AppError('LOGIN_FAILED');
      if (check.needsRehash && password) await usersStore.setPasswordHash(db, Number(user.id), await hashPassword(password));
      return completeLogin(user, 'password', client);
    },

    /** A27: the public key clients encrypt the password with. */
    async encryptionKey() {
      if (!ctx.config.passwordLoginEncryptionEnabled) return { enabled: false };
      try {
        const k = await encryption.key();
        return { enabled: true, kid: k.kid, public_key: k.publicKeyPem };
      } catch (e) {
        ctx.log.error({ err: e }, 'password encryption key unavailable');
        throw new AppError('PASSWORD_ENCRYPTION_UNAVAILABLE');
      }
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
