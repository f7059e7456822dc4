import crypto from 'node:crypto';
import { AppError, type Lang } from '../../kit/http/errors.js';
import { hashPassword } from '../../kit/crypto/password.js';
import { deriveKey, hmac, randomToken, safeEqual } from '../../kit/crypto/tokens.js';
import { nowSeconds, USER_STATUS } from '../db.js';
import type { AccountContext } from '../context.js';
import { passwordProblem } from '../users/password-policy.js';
import { bindingDb } from '../bindings/store.js';
import { emailCodesStore } from '../email/store.js';
import { CODE_MAX_ATTEMPTS, normalizeEmail, type EmailService } from '../email/service.js';
import type { SessionsService } from '../sessions/service.js';

const PURPOSE = 'reset';
const LINK_PURPOSE = 'admin-reset';
const GENERATED_LENGTH = 12;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** A random password of 12 characters without look-alikes (the reset without a chosen password, an admin's reset). */
export function generatedPassword(): string {
  let out = '';
  for (let i = 0; i < GENERATED_LENGTH; i++) out += ALPHABET[crypto.randomInt(0, ALPHABET.length)];
  return out;
}

/** A11 and A42: emailed single-use reset tokens; AS21: an admin's single-use reset link. */
export function createResetService(ctx: AccountContext, { email, sessions }: { email: EmailService; sessions: SessionsService }) {
  const db = bindingDb(ctx);
  const cfg = ctx.config.mailOAuth;
  const key = deriveKey(ctx.secret, 'password-reset');
  const hashOf = (address: string, token: string) => hmac(key, `${address}\n${token}`);

  return {
    /**
     * A11: answers the same whether or not the address has an account. The mail goes out after the
     * answer, so SMTP latency does not tell the two cases apart either.
     */
    async request(rawEmail: string | undefined, ip: string, lang: Lang, baseUrl: string) {
      const address = normalizeEmail(rawEmail);
      await email.limitSends(ip, address);
      const token = randomToken(24);
      const user = await db
        .selectFrom('users')
        .select(['id', 'status'])
        .where('email', '=', address)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (!user) return;
      const now = nowSeconds();
      await emailCodesStore.put(db, { purpose: PURPOSE, email: address, code_hash: hashOf(address, token), created_at: now, expires_at: now + cfg.passwordResetTtlSeconds });
      const link = `${baseUrl}/user/reset?email=${encodeURIComponent(address)}&token=${encodeURIComponent(token)}`;
      void email
        .send(address, 'password_reset', lang, { link, minutes: Math.round(cfg.passwordResetTtlSeconds / 60) })
        .catch((e) => ctx.log.warn({ err: e }, 'password reset mail failed'));
    },

    /**
     * AS21: a single-use link an admin hands to a user (who may have no address): the same reset page and
     * A42 with `user` in place of the address. A new link replaces the user's previous one; it lasts as long
     * as a mailed one (PASSWORD_RESET_TTL_SECONDS). Answers the link and when it ends.
     */
    async issueLink(userId: number, baseUrl: string) {
      const token = randomToken(24);
      const now = nowSeconds();
      const expiresAt = now + cfg.passwordResetTtlSeconds;
      const target = linkTarget(userId);
      await emailCodesStore.put(db, { purpose: target.purpose, email: target.key, code_hash: hashOf(target.key, token), created_at: now, expires_at: expiresAt });
      return { link: `${baseUrl}/user/reset?user=${userId}&token=${encodeURIComponent(token)}`, expires_at: expiresAt };
    },

    /**
     * A42: checks the token (a mailed one for `email`, an admin's link for `user`), sets the chosen password
     * (validated like registration) or a generated one, bumps the auth version and revokes every session.
     * Returns the generated password, if any.
     */
    async reset(input: { email?: string; user?: number; token?: string; password?: string }): Promise<string | null> {
      const invalid = () => new AppError('RESET_LINK_INVALID');
      const target = input.user !== undefined ? linkTarget(input.user) : mailTarget((input.email ?? '').trim().toLowerCase());
      const token = input.token ?? '';
      if (!target.key || !token || token.length > 128) throw invalid();
      const chosen = input.password ? input.password : null;
      if (chosen !== null) {
        const problem = passwordProblem(chosen, { words: ctx.config.passwordContextWords });
        if (problem) throw new AppError('RESET_PASSWORD_INVALID', { params: { detail: problem } });
      }
      const row = await emailCodesStore.get(db, target.purpose, target.key);
      if (!row) throw invalid();
      if (Number(row.expires_at) <= nowSeconds() || row.attempts >= CODE_MAX_ATTEMPTS) {
        await emailCodesStore.remove(db, target.purpose, target.key);
        throw invalid();
      }
      const hash = hashOf(target.key, token);
      if (!safeEqual(hash, row.code_hash)) {
        await emailCodesStore.addAttempt(db, target.purpose, target.key);
        throw invalid();
      }
      const userOf = (q: typeof db) => q.selectFrom('users').select(['id', 'username', 'status']).where(target.column, '=', target.value).where('deleted_at', 'is', null).executeTakeFirst();
      // Only now, with the token proven, may the answer depend on the account (its username).
      const owner = await userOf(db);
      const close = chosen !== null && owner ? passwordProblem(chosen, { username: owner.username, words: ctx.config.passwordContextWords }) : null;
      if (close) throw new AppError('RESET_PASSWORD_INVALID', { params: { detail: close } });
      const password = chosen ?? generatedPassword();
      const passwordHash = await hashPassword(password);
      const userId = await db.transaction().execute(async (trx) => {
        if (!(await emailCodesStore.take(trx, target.purpose, target.key, hash))) return null;
        const user = await userOf(trx);
        if (!user || user.status !== USER_STATUS.enabled) return null;
        await trx
          .updateTable('users')
          .set((eb) => ({ password_hash: passwordHash, auth_version: eb('auth_version', '+', 1) }))
          .where('id', '=', Number(user.id))
          .execute();
        return Number(user.id);
      });
      if (userId === null) throw invalid();
      await sessions.revokeAllOfUser(userId, 'password_reset');
      await sessions.invalidateUser(userId);
      await email.securityChanged(userId, 'password_reset');
      return chosen === null ? password : null;
    },
  };
}

/** Where a reset token is kept and whose account it opens: a mailed one by address, an admin's link by user id (`user:<id>`, never an address). */
interface ResetTarget {
  purpose: string;
  key: string;
  column: 'email' | 'id';
  value: string | number;
}
const mailTarget = (address: string): ResetTarget => ({ purpose: PURPOSE, key: address, column: 'email', value: address });
const linkTarget = (userId: number): ResetTarget => ({ purpose: LINK_PURPOSE, key: `user:${userId}`, column: 'id', value: userId });

export type ResetService = ReturnType<typeof createResetService>;
