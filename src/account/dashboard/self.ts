import { AppError } from '../../kit/http/errors.js';
import { hashPassword, verifyPassword } from '../../kit/crypto/password.js';
import { bindingDb, bindingsStore, type BindingUserRow } from '../bindings/store.js';
import { selfView } from '../users/service.js';
import { passwordProblem } from '../users/password-policy.js';
import { usersStore } from '../users/store.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { SessionsService } from '../sessions/service.js';
import type { CustomerBalance } from '../../contract/customer.js';
import type { WalletService } from '../customers/wallet/service.js';

/** The reference's limit on display names (its User.DisplayName `max=20`). */
export const DISPLAY_NAME_MAX = 20;

/**
 * AS03: the reference's self profile with the fields this service has: the safe self view, the built-in
 * bindings ("" when unbound, as the reference) and the wallet's counters from the edge (affiliate counters
 * are always 0: no affiliate credit here).
 */
export function profileView(u: BindingUserRow, balance: CustomerBalance) {
  return {
    ...selfView(u),
    github_id: u.github_id ?? '',
    discord_id: u.discord_id ?? '',
    oidc_id: u.oidc_id ?? '',
    wechat_id: u.wechat_id ?? '',
    telegram_id: u.telegram_id ?? '',
    linux_do_id: u.linux_do_id ?? '',
    quota: balance.quota,
    used_quota: balance.used_quota,
    request_count: balance.request_count,
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
  };
}

export interface SelfUpdate {
  display_name?: string;
  password?: string;
  original_password?: string;
}

const invalid = (detail: string) => new AppError('SELF_UPDATE_INVALID', { params: { detail } });

/** AS03 and AS04: the caller's own profile, display name and password. */
export function createSelfService(ctx: AccountContext, sessions: SessionsService, wallet: Pick<WalletService, 'balanceOf'>) {
  const db = bindingDb(ctx);
  const { db: accountDb } = ctx.database;

  /**
   * The new password's hash, after the checks a password change needs: a browser session (its authority
   * is rotated), an existing password, the old password, and the password policy of registration.
   */
  async function newPasswordHash(identity: AccountIdentity, input: SelfUpdate): Promise<string> {
    if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
    const user = await usersStore.byId(accountDb, identity.userId);
    if (!user) throw new AppError('AUTH_SESSION_REVOKED');
    // An account without a password (signed up through a provider) gets one by a reset mail, never here:
    // a stolen access token must not be able to add a way to sign in.
    if (!user.password_hash) throw new AppError('SELF_PASSWORD_NOT_SET');
    const problem = passwordProblem(input.password!, { username: user.username, words: ctx.config.passwordContextWords });
    if (problem) throw invalid(problem);
    if (!(await verifyPassword(user.password_hash, input.original_password ?? '')).valid) throw new AppError('SELF_ORIGINAL_PASSWORD_WRONG');
    return hashPassword(input.password!);
  }

  return {
    async profile(identity: AccountIdentity) {
      const user = await bindingsStore.userById(db, identity.userId);
      if (!user) throw new AppError('AUTH_SESSION_REVOKED');
      return profileView(user, await wallet.balanceOf(identity.userId));
    },

    /**
     * AS04: every check first, then the display name, then the password with the authority rotation
     * (auth version bumped, every other session revoked, the security notice mailed). Returns the rotation
     * object when the password changed.
     */
    async update(identity: AccountIdentity, input: SelfUpdate) {
      const displayName = input.display_name?.trim();
      if (displayName !== undefined && (displayName === '' || [...displayName].length > DISPLAY_NAME_MAX)) {
        throw invalid(`display_name must be 1 to ${DISPLAY_NAME_MAX} characters`);
      }
      const changesPassword = Boolean(input.password);
      if (displayName === undefined && !changesPassword) throw invalid('nothing to change: give display_name or password');
      const hash = changesPassword ? await newPasswordHash(identity, input) : null;
      if (displayName !== undefined) await usersStore.setDisplayName(accountDb, identity.userId, displayName);
      if (hash === null) return undefined;
      return sessions.rotateAuthority(identity, 'password_changed', (trx) => usersStore.setPasswordHash(trx, identity.userId, hash));
    },
  };
}

export type SelfService = ReturnType<typeof createSelfService>;
