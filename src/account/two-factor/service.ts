import type { Transaction } from 'kysely';
import QRCode from 'qrcode';
import { AppError } from '../../kit/http/errors.js';
import { open, seal } from '../../kit/crypto/aead.js';
import { verifyPassword } from '../../kit/crypto/password.js';
import { deriveKey, hmac } from '../../kit/crypto/tokens.js';
import { nowSeconds, type AccountDB } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { FlowsService } from '../flows/service.js';
import type { UsersService } from '../users/service.js';
import type { SessionsService } from '../sessions/service.js';
import { twoFactorStore } from './store.js';
import { classifyCode, matchTotpStep, newBackupCodes, newTotpSecret, totpUri } from './totp.js';

export const MAX_FAILED_ATTEMPTS = 5;
export const LOCK_SECONDS = 300;
export const BACKUP_CODE_COUNT = 4;
const SETUP_TTL_SECONDS = 300;

interface SetupPayload {
  secret_sealed: string;
  backup_hashes: string[];
}

/** TOTP second factor: enrolment, verification with lockout and replay guard, backup codes. */
export function createTwoFactorService(
  ctx: AccountContext,
  { flows, users, sessions }: { flows: FlowsService; users: UsersService; sessions: SessionsService },
) {
  const { db, dialect } = ctx.database;
  const secretKey = deriveKey(ctx.secret, 'totp-secret');
  const backupKey = deriveKey(ctx.secret, 'backup-code');
  const sealSecret = (userId: number, b32: string) => seal(secretKey, b32, `totp:${userId}`);
  const openSecret = (userId: number, sealed: string) => open(secretKey, sealed, `totp:${userId}`);
  const hashBackup = (userId: number, normalised: string) => hmac(backupKey, `${userId}:${normalised}`);

  function newCodes(userId: number) {
    const codes = newBackupCodes(BACKUP_CODE_COUNT);
    return { codes, hashes: codes.map((c) => hashBackup(userId, classifyCode(c).value)) };
  }

  /**
   * Backup codes imported from new-api keep its bcrypt hash of the code written XXXX-XXXX (the codes
   * themselves are unknown): an unmatched code is tried against the user's unused imported ones.
   */
  async function useImportedCode(trx: Transaction<AccountDB>, userId: number, normalised: string, now: number) {
    for (const stored of await twoFactorStore.unusedImportedHashes(trx, userId)) {
      if ((await verifyPassword(stored, `${normalised.slice(0, 4)}-${normalised.slice(4)}`)).valid) {
        return twoFactorStore.useBackupCode(trx, userId, stored, now);
      }
    }
    return false;
  }

  async function state(userId: number) {
    const row = await twoFactorStore.byUser(db, userId);
    if (!row) return { enabled: false, locked: false } as const;
    return { enabled: true, locked: Number(row.locked_until) > nowSeconds() } as const;
  }

  return {
    state,
    /** The stored form of a TOTP secret (import from another system; enrolment seals its own). */
    sealSecret,

    /**
     * Checks a TOTP or backup code of an enrolled user. A wrong code counts one failure; the fifth locks
     * the factor for 300 s (even correct codes fail meanwhile). A TOTP step accepted once is refused again.
     * Throws SECURITY_VERIFICATION_LOCKED / SECURITY_VERIFICATION_FAILED / TWOFA_NOT_ENABLED.
     */
    async verify(userId: number, code: string, opts: { allowBackup?: boolean } = {}): Promise<'totp' | 'backup'> {
      const input = classifyCode(code);
      const outcome = await db.transaction().execute(async (trx) => {
        const row = await twoFactorStore.byUser(trx, userId, dialect);
        if (!row) return 'missing' as const;
        const now = nowSeconds();
        if (Number(row.locked_until) > now) return 'locked' as const;
        if (input.kind === 'totp') {
          const step = matchTotpStep(openSecret(userId, row.secret_sealed), input.value);
          if (step !== null && step > Number(row.last_step)) {
            await twoFactorStore.update(trx, userId, { last_step: step, failed_attempts: 0 });
            return 'totp' as const;
          }
        } else if (input.kind === 'backup' && opts.allowBackup !== false) {
          const own = await twoFactorStore.useBackupCode(trx, userId, hashBackup(userId, input.value), now);
          if (own || (await useImportedCode(trx, userId, input.value, now))) {
            await twoFactorStore.update(trx, userId, { failed_attempts: 0 });
            return 'backup' as const;
          }
        }
        const failed = row.failed_attempts + 1;
        if (failed >= MAX_FAILED_ATTEMPTS) await twoFactorStore.update(trx, userId, { failed_attempts: 0, locked_until: now + LOCK_SECONDS });
        else await twoFactorStore.update(trx, userId, { failed_attempts: failed });
        return 'failed' as const;
      });
      if (outcome === 'missing') throw new AppError('TWOFA_NOT_ENABLED');
      if (outcome === 'locked') throw new AppError('SECURITY_VERIFICATION_LOCKED');
      if (outcome === 'failed') throw new AppError('SECURITY_VERIFICATION_FAILED');
      return outcome;
    },

    /** A17. */
    async status(userId: number) {
      const s = await state(userId);
      if (!s.enabled) return { enabled: false, locked: false };
      return { ...s, backup_codes_remaining: await twoFactorStore.backupCodesRemaining(db, userId) };
    },

    /** A15 (after the TwoFASetup proof): a new secret and backup codes held in a 5-minute enrolment flow. */
    async beginSetup(identity: AccountIdentity) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      if ((await state(identity.userId)).enabled) throw new AppError('TWOFA_ALREADY_ENABLED');
      const user = await users.byId(identity.userId);
      if (!user) throw new AppError('AUTH_SESSION_REVOKED');
      const secret = newTotpSecret();
      const uri = totpUri(secret, ctx.config.totpIssuer, user.username);
      const { codes, hashes } = newCodes(identity.userId);
      // One enrolment per session at a time: A14 without a flow token takes the session's live one.
      await flows.endLiveOfSession('2fa_setup', identity.userId, identity.sid);
      const flow = await flows.create<SetupPayload>({
        purpose: '2fa_setup',
        ttlSeconds: SETUP_TTL_SECONDS,
        userId: identity.userId,
        sessionId: identity.sid,
        payload: { secret_sealed: sealSecret(identity.userId, secret), backup_hashes: hashes },
      });
      return {
        secret,
        otpauth_uri: uri,
        qr_code_data: uri,
        qr_code_image: await QRCode.toDataURL(uri),
        backup_codes: codes,
        flow_token: flow.token,
        expires_at: flow.expiresAt,
      };
    },

    /**
     * A14: the first valid code enables the factor; rotates the session authority. Without a flow token
     * (new-api's dashboard sends only the code) the session's live enrolment is the one.
     */
    async enable(identity: AccountIdentity, flowToken: string | undefined, code: string) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const ref = flowToken ? flows.refOf(flowToken) : await flows.latestOfSession('2fa_setup', identity.userId, identity.sid);
      const flow = await flows.peekRef<SetupPayload>(ref, '2fa_setup');
      if (!ref || !flow || flow.userId !== identity.userId || flow.sessionId !== identity.sid) throw new AppError('TWOFA_SETUP_INVALID');
      const input = classifyCode(code);
      const step = input.kind === 'totp' ? matchTotpStep(openSecret(identity.userId, flow.payload.secret_sealed), input.value) : null;
      if (step === null) {
        if ((await flows.addAttemptRef(ref)) >= MAX_FAILED_ATTEMPTS) await flows.consumeRef(ref, '2fa_setup');
        throw new AppError('TWOFA_CODE_INVALID');
      }
      if (!(await flows.consumeRef(ref, '2fa_setup'))) throw new AppError('TWOFA_SETUP_INVALID');
      await db.transaction().execute(async (trx) => {
        if (await twoFactorStore.byUser(trx, identity.userId, dialect)) throw new AppError('TWOFA_ALREADY_ENABLED');
        const now = nowSeconds();
        await twoFactorStore.insert(trx, identity.userId, flow.payload.secret_sealed, step, now);
        await twoFactorStore.replaceBackupCodes(trx, identity.userId, flow.payload.backup_hashes, now);
      });
      return sessions.rotateAuthority(identity, 'twofa_enabled');
    },

    /** A13 (after the TwoFADisable proof). */
    async disable(identity: AccountIdentity) {
      if (!(await twoFactorStore.remove(db, identity.userId))) throw new AppError('TWOFA_NOT_ENABLED');
      return sessions.rotateAuthority(identity, 'twofa_disabled');
    },

    /** A12 (after the TwoFABackupCodes proof): replaces every backup code. */
    async regenerateBackupCodes(identity: AccountIdentity) {
      if (!(await state(identity.userId)).enabled) throw new AppError('TWOFA_NOT_ENABLED');
      const { codes, hashes } = newCodes(identity.userId);
      await db.transaction().execute((trx) => twoFactorStore.replaceBackupCodes(trx, identity.userId, hashes, nowSeconds()));
      const rotation = await sessions.rotateAuthority(identity, 'twofa_backup_codes_regenerated');
      return { ...rotation, backup_codes: codes };
    },

    /** A16. */
    async stats() {
      const { total, enabled } = await twoFactorStore.stats(db);
      const rate = total === 0 ? 0 : (enabled / total) * 100;
      return { total_users: total, enabled_users: enabled, enabled_rate: `${rate.toFixed(1)}%` };
    },

    /** Which of these users have two-factor (the admin user list). */
    enrolledAmong(userIds: number[]) {
      return twoFactorStore.enrolledAmong(db, userIds);
    },

    /** A18: an admin who outranks the target removes its factor; every session of the target ends. */
    async adminDisable(admin: AccountIdentity, targetId: number) {
      const remove = (trx: Transaction<AccountDB>) => twoFactorStore.remove(trx, targetId);
      await users.removeFactorAsAdmin(admin, targetId, remove, 'USER_TWOFA_NOT_ENABLED', 'admin_twofa_disabled');
    },
  };
}

export type TwoFactorService = ReturnType<typeof createTwoFactorService>;
