import { AppError } from '../../kit/http/errors.js';
import { ROLE } from '../db.js';
import type { UserRow, UserSearch } from '../users/store.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { UsersService } from '../users/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import type { PasskeysService } from '../passkeys/service.js';
import type { SessionsService } from '../sessions/service.js';
import type { CustomerBalance } from '../../contract/customer.js';
import type { WalletService } from '../customers/wallet/service.js';
import type { TokensService } from '../customers/tokens/service.js';

const NO_BALANCE: CustomerBalance = { quota: 0, used_quota: 0, request_count: 0 };

/** new-api's page size when none is asked for, and its cap. */
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export type ManageAction = 'disable' | 'enable' | 'promote' | 'demote' | 'delete';

/** A user as the admin list shows it: never a password hash, token hash, TOTP secret or passkey key. */
function listView(u: UserRow, twofa: boolean, passkeys: number, lastLogin: number, balance: CustomerBalance) {
  return {
    id: Number(u.id),
    username: u.username,
    display_name: u.display_name,
    email: u.email ?? '',
    role: Number(u.role),
    status: Number(u.status),
    group: u.group,
    created_at: Number(u.created_at),
    last_login_at: lastLogin,
    twofa_enabled: twofa,
    passkey_count: passkeys,
    // new-api's dashboard reads these of every row (its user list fails without request_count).
    quota: balance.quota,
    used_quota: balance.used_quota,
    request_count: balance.request_count,
  };
}

export type AdminUserView = ReturnType<typeof listView>;

/**
 * The admin user list and user management (AS05–AS08, additions: SPEC has no user list). The role rules are
 * the reference's ManageUser: the actor outranks the target (root may act on anyone), only root promotes, a
 * root user is neither disabled nor demoted, and nobody acts on themselves.
 */
export function createUserAdminService(
  ctx: AccountContext,
  {
    users,
    twoFactor,
    passkeys,
    sessions,
    wallet,
    tokens,
  }: {
    users: UsersService;
    twoFactor: TwoFactorService;
    passkeys: PasskeysService;
    sessions: SessionsService;
    wallet: Pick<WalletService, 'balancesOf'>;
    tokens: Pick<TokensService, 'removeAll'>;
  },
) {
  async function views(rows: UserRow[]): Promise<AdminUserView[]> {
    const ids = rows.map((r) => Number(r.id));
    const [withTwoFactor, passkeyCounts, lastLogins, balances] = await Promise.all([
      twoFactor.enrolledAmong(ids),
      passkeys.countsOf(ids),
      sessions.lastLoginOf(ids),
      wallet.balancesOf(ids),
    ]);
    return rows.map((r) => {
      const id = Number(r.id);
      return listView(r, withTwoFactor.has(id), passkeyCounts.get(id) ?? 0, lastLogins.get(id) ?? 0, balances.get(id) ?? NO_BALANCE);
    });
  }

  return {
    /** AS05 (no filter) and AS06: one page, newest first, in new-api's page shape. */
    async list(q: UserSearch & { p?: number; page_size?: number }) {
      const page = Math.max(1, q.p ?? 1);
      const pageSize = Math.min(MAX_PAGE_SIZE, Math.max(1, q.page_size ?? DEFAULT_PAGE_SIZE));
      const { rows, total } = await users.search(q, (page - 1) * pageSize, pageSize);
      return { page, page_size: pageSize, total, items: await views(rows) };
    },

    /** AS07: one user, for an admin who outranks it (the reference's GetUser). */
    async get(admin: AccountIdentity, id: number) {
      const target = await users.requireOutrank(admin, id);
      return (await views([target]))[0]!;
    },

    /**
     * AS08: disable, enable, promote, demote or delete; every change but `enable` ends the target's sessions.
     * `disable` stops every API key of the user at the edge and `enable` turns them on again (users/service.ts).
     * `delete` is the reference's soft delete: the user's API keys on the edge are deleted and stopped first
     * (a failure there leaves the user as it was), then the row is marked deleted.
     */
    async manage(admin: AccountIdentity, id: number, action: ManageAction) {
      if (id === admin.userId) throw new AppError('USER_MANAGE_SELF');
      const target = await users.requireOutrank(admin, id);
      const role = Number(target.role);
      const by = `account:${admin.userId}`;
      switch (action) {
        case 'disable':
          if (role >= ROLE.root) throw new AppError('USER_ROOT_PROTECTED');
          await users.disable(id, by);
          break;
        case 'enable':
          await users.enable(id, by);
          break;
        case 'promote':
          if (admin.role < ROLE.root) throw new AppError('USER_PROMOTE_ROOT_ONLY');
          if (role >= ROLE.admin) throw new AppError('USER_ALREADY_ADMIN');
          await users.setSecurity(id, { role: ROLE.admin });
          break;
        case 'demote':
          if (role >= ROLE.root) throw new AppError('USER_ROOT_PROTECTED');
          if (role <= ROLE.user) throw new AppError('USER_ALREADY_COMMON');
          await users.setSecurity(id, { role: ROLE.user });
          await sessions.revokeAllOfUser(id, 'admin_demote');
          break;
        case 'delete':
          if (role >= ROLE.root) throw new AppError('USER_ROOT_PROTECTED');
          await tokens.removeAll(id);
          if (!(await users.softDelete(id, by))) throw new AppError('USER_NOT_FOUND');
          break;
      }
      // The audit line of the reference's recordManageAuditFor("user.manage"): who did what to whom.
      ctx.log.info({ audit: 'user.manage', action, admin_id: admin.userId, target_id: id, target_username: target.username }, 'user managed');
      const after = await users.byId(id);
      return { id, role: Number(after?.role ?? role), status: Number(after?.status ?? target.status) };
    },
  };
}

export type UserAdminService = ReturnType<typeof createUserAdminService>;
