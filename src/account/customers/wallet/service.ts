import type { Logger } from 'pino';
import { AppError } from '../../../kit/http/errors.js';
import { CustomerRefusal, type CustomerBalance } from '../../../contract/customer.js';
import type { AccountIdentity } from '../../context.js';
import type { EdgeAccess } from '../edge.js';

export const REASON_MAX = 200;
const ZERO: CustomerBalance = { quota: 0, used_quota: 0, request_count: 0 };

/** The admin's quota edit (new-api's PUT /api/user/): the fields read here; the others are left as they are. */
export interface QuotaEdit {
  id: number;
  quota?: number;
  reason?: string;
  password?: string;
}

/** What the quota edit needs of the users: the reference's rank rule (users/service.ts). */
export interface Outranking {
  requireOutrank(actor: AccountIdentity, targetId: number): Promise<{ username: string }>;
}

const invalid = (detail: string) => new AppError('CUSTOMER_INVALID', { params: { detail } });

/** The account users' wallets on the edge: balances beside the profile and the admin list, the admin's audited quota edit. */
export function createWalletService(edge: EdgeAccess, deps: { users: Outranking; log: Logger }) {
  const { users, log } = deps;

  /**
   * Balances for pages that must load without the edge (the profile, the admin list): zeros when this
   * service cannot reach the edge, with a warning; other failures are errors.
   */
  async function orZeros<T>(read: () => Promise<T>, zeros: T): Promise<T> {
    if (!edge.port) return zeros;
    try {
      return await read();
    } catch (e) {
      if (!(e instanceof CustomerRefusal && e.reason === 'unavailable')) throw e;
      log.warn('edge unreachable: balances shown as 0');
      return zeros;
    }
  }

  return {
    balanceOf(userId: number): Promise<CustomerBalance> {
      return orZeros(() => edge.port!.balance(userId), ZERO);
    },

    balancesOf(userIds: number[]): Promise<Map<number, CustomerBalance>> {
      if (userIds.length === 0) return Promise.resolve(new Map());
      return orZeros(() => edge.port!.balances(userIds), new Map());
    },

    /**
     * Sets a user's balance to `quota` units as one audited wallet movement on the edge, with the reason
     * the admin gives, for an admin who outranks the user.
     */
    async setQuota(admin: AccountIdentity, edit: QuotaEdit) {
      if (edit.password) throw invalid('the password is not changed here: the user changes it or resets it by mail');
      if (edit.quota === undefined) throw invalid('quota is required: this edit sets the balance only');
      const reason = (edit.reason ?? '').trim();
      if (reason.length < 1 || [...reason].length > REASON_MAX) throw invalid(`reason is required (1 to ${REASON_MAX} characters): it is kept with the wallet movement`);
      const quota = edit.quota;
      const target = await users.requireOutrank(admin, edit.id);
      const balance = await edge.run((port) => port.setQuota(edit.id, quota, `account:${admin.userId}`, reason));
      log.info({ audit: 'user.quota', admin_id: admin.userId, target_id: edit.id, target_username: target.username, quota }, 'user quota set');
      return { id: edit.id, ...balance };
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;

/**
 * The starting balance of a user who just signed up (QUOTA_FOR_NEW_USER, new-api's QuotaForNewUser),
 * credited once (`signup:<id>`: a retry adds nothing). Never fails the sign-up: an unreachable edge is a
 * warning, and an operator can credit the user later.
 */
export function createSignupGrant(edge: EdgeAccess, log: Logger, amount: number) {
  return async (userId: number): Promise<void> => {
    if (amount <= 0) return;
    const port = edge.port;
    if (!port) {
      log.warn({ user_id: userId, amount }, 'starting balance not granted: the edge is not reachable from this service');
      return;
    }
    try {
      await port.grant(userId, amount, `signup:${userId}`, 'system:signup', 'starting balance of a new user (QUOTA_FOR_NEW_USER)');
    } catch (e) {
      log.warn({ user_id: userId, amount, refusal: e instanceof CustomerRefusal ? e.reason : 'error' }, 'starting balance not granted');
    }
  };
}

export type SignupGrant = ReturnType<typeof createSignupGrant>;
