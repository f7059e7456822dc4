import crypto from 'node:crypto';
import { AppError, type Lang } from '../../kit/http/errors.js';
import { deriveKey, hmac, safeEqual, sha256 } from '../../kit/crypto/tokens.js';
import type { Mailer } from '../../kit/mail/index.js';
import { nowSeconds } from '../db.js';
import type { AccountContext } from '../context.js';
import { EMAIL_MAX } from '../users/service.js';
import { bindingDb } from '../bindings/store.js';
import { usersStore } from '../users/store.js';
import { emailCodesStore } from './store.js';
import { renderMail } from './templates.js';

export const CODE_MAX_ATTEMPTS = 5;

/**
 * The mail line for each change made through `securityChanged` (the session revocation reasons). Changes
 * that mail their own notice (email and OAuth bindings) are not listed.
 */
const SECURITY_CHANGES: Record<string, string> = {
  password_reset: 'password reset',
  password_changed: 'password changed',
  twofa_enabled: 'two-factor authentication enabled',
  twofa_disabled: 'two-factor authentication disabled',
  twofa_backup_codes_regenerated: 'backup codes regenerated',
  passkey_registered: 'passkey registered',
  passkey_deleted: 'passkey removed',
  admin_twofa_disabled: 'two-factor authentication removed by an administrator',
  admin_passkey_reset: 'passkey removed by an administrator',
  admin_password_reset: 'password reset by an administrator',
};
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Trimmed, lower-cased address, or EMAIL_INVALID. */
export function normalizeEmail(raw: string | undefined): string {
  const email = (raw ?? '').trim().toLowerCase();
  if (!email || email.length > EMAIL_MAX || !EMAIL.test(email)) throw new AppError('EMAIL_INVALID');
  return email;
}

/** A six-digit code from the CSPRNG. */
export function sixDigitCode(): string {
  return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
}

/**
 * Email codes (A46 registration codes, reset tokens) and account mail. Codes are stored as HMACs, are
 * single use, and die after CODE_MAX_ATTEMPTS wrong guesses.
 */
export function createEmailService(ctx: AccountContext, mailer: Mailer) {
  const db = bindingDb(ctx);
  const cfg = ctx.config.mailOAuth;
  const key = deriveKey(ctx.secret, 'email-code');
  const hashOf = (purpose: string, email: string, code: string) => hmac(key, `${purpose}\n${email}\n${code}`);

  async function issue(purpose: string, email: string, code: string, ttlSeconds: number) {
    const now = nowSeconds();
    await emailCodesStore.put(db, { purpose, email, code_hash: hashOf(purpose, email, code), created_at: now, expires_at: now + ttlSeconds });
  }

  /** True exactly once for the right, unexpired code; wrong guesses count toward the limit. */
  async function consume(purpose: string, email: string, code: string): Promise<boolean> {
    const row = await emailCodesStore.get(db, purpose, email);
    if (!row || !code || code.length > 128) return false;
    if (Number(row.expires_at) <= nowSeconds() || row.attempts >= CODE_MAX_ATTEMPTS) {
      await emailCodesStore.remove(db, purpose, email);
      return false;
    }
    const hash = hashOf(purpose, email, code);
    if (safeEqual(hash, row.code_hash)) return emailCodesStore.take(db, purpose, email, hash);
    await emailCodesStore.addAttempt(db, purpose, email);
    return false;
  }

  async function limit(name: string, key: string) {
    const r = await ctx.limiter.hit(`${name}:${key}`, cfg.emailRateLimit, cfg.emailRateLimitDuration);
    if (!r.allowed) {
      throw new AppError('EMAIL_VERIFICATION_RATE_LIMITED', {
        params: { seconds: r.retryAfter },
        headers: { 'Retry-After': String(r.retryAfter) },
      });
    }
  }

  async function send(to: string, template: string, lang: Lang, params: Record<string, string | number> = {}) {
    const m = renderMail(template, lang, params);
    return (await mailer.send({ to, subject: m.subject, text: m.text })).delivered;
  }

  /** Tells the user about a committed security change; returns notification_warning (true = not sent). */
  async function notify(address: string | null | undefined, action: string, lang: Lang): Promise<boolean> {
    if (!address) return false;
    const failed = !(await send(address, 'security_notice', lang, { action }));
    if (failed) ctx.log.warn({ action, notification_failed: true }, 'security notification could not be sent');
    return failed;
  }

  return {
    issue,
    consume,
    send,
    /** Per-IP and per-address send limits (EMAIL_VERIFICATION_RATE_LIMIT per ..._DURATION seconds). */
    async limitSends(ip: string, email: string) {
      await limit('email-send-ip', ip);
      await limit('email-send-addr', sha256(email));
    },

    /**
     * A46: sends a registration code. An address that already has an account gets a notice instead of
     * a code, so the answer and the work done are the same either way.
     */
    async sendVerificationCode(rawEmail: string | undefined, ip: string, lang: Lang) {
      const email = normalizeEmail(rawEmail);
      await this.limitSends(ip, email);
      const taken = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
      let delivered: boolean;
      if (taken) {
        delivered = await send(email, 'address_in_use', lang);
      } else {
        const code = sixDigitCode();
        await issue('register', email, code, cfg.emailCodeTtlSeconds);
        delivered = await send(email, 'verification_code', lang, { code, minutes: Math.round(cfg.emailCodeTtlSeconds / 60) });
      }
      if (!delivered) throw new AppError('EMAIL_SEND_FAILED');
    },

    notify,

    /** Mails the notice of a `SECURITY_CHANGES` change; a failure is only logged, the change stands. */
    async securityChanged(userId: number, reason: string) {
      const action = SECURITY_CHANGES[reason];
      if (!action) return;
      try {
        const user = await usersStore.byId(ctx.database.db, userId);
        // The user's language is not known outside a request; the notice is short and in English.
        await notify(user?.email, action, 'en');
      } catch (e) {
        ctx.log.warn({ err: e, action, notification_failed: true }, 'security notification could not be sent');
      }
    },

    purge() {
      return emailCodesStore.purge(db, nowSeconds());
    },
  };
}

export type EmailService = ReturnType<typeof createEmailService>;
