import { AppError } from '../../kit/http/errors.js';
import { verifyPassword, hashPassword } from '../../kit/crypto/password.js';
import { USER_STATUS } from '../db.js';
import { usersStore, type UserRow } from '../users/store.js';
import type { ClientInfo, IssuedSession, SessionsService } from '../sessions/service.js';
import type { AccountContext } from '../context.js';
import type { VerificationService } from '../verification/service.js';
import type { PasswordEncryption, PasswordInput } from './password-encryption.js';

export interface PasswordLoginInput extends PasswordInput {
  username?: string;
}

export type LoginOutcome = { kind: 'session'; issued: IssuedSession } | { kind: 'challenge'; data: Record<string, unknown> };

export function createLoginService(
  ctx: AccountContext,
  { sessions, encryption, verification }: { sessions: SessionsService; encryption: PasswordEncryption; verification: Pick<VerificationService, 'loginChallenge'> },
) {
  const { db } = ctx.database;

  /**
   * The one exit every login method shares after its first factor: the second-factor branch when the
   * user has one, otherwise a new session under the caps.
   */
  async function completeLogin(user: UserRow, loginMethod: string, client: ClientInfo): Promise<LoginOutcome> {
    const challenge = await verification.loginChallenge(user, loginMethod);
    if (challenge) return challenge;
    return { kind: 'session', issued: await sessions.issue(user, loginMethod, client) };
  }

  return {
    completeLogin,

    /** A25: username or email with a password (plain or client-encrypted). */
    async passwordLogin(input: PasswordLoginInput, client: ClientInfo): Promise<LoginOutcome> {
      if (!ctx.config.passwordLoginEnabled) throw new AppError('PASSWORD_LOGIN_DISABLED');
      const name = (input.username ?? '').trim();
      if (!name) throw new AppError('LOGIN_INVALID_PARAMETERS');
      if (!ctx.config.passwordLoginEncryptionEnabled && !input.password) throw new AppError('LOGIN_INVALID_PARAMETERS');
      const password = await encryption.passwordFrom(input);
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
