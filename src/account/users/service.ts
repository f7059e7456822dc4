import crypto from 'node:crypto';
import { AppError } from '../../kit/http/errors.js';
import { hashPassword } from '../../kit/crypto/password.js';
import { randomToken, sha256 } from '../../kit/crypto/tokens.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { nowSeconds, ROLE, USER_STATUS } from '../db.js';
import { usersStore, type UserRow, type UserSearch } from './store.js';
import { passwordProblem } from './password-policy.js';
import type { Transaction } from 'kysely';
import type { AccountDB } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { SecurityNotices, SessionsService } from '../sessions/service.js';

export const USERNAME_MAX = 20;
export const EMAIL_MAX = 50;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The safe self view of a user: never a hash, token or internal note. */
export function selfView(u: UserRow) {
  return {
    id: Number(u.id),
    username: u.username,
    display_name: u.display_name,
    role: u.role,
    status: u.status,
    email: u.email ?? '',
    group: u.group,
    aff_code: u.aff_code,
    inviter_id: u.inviter_id ?? 0,
  };
}

export interface RegisterInput {
  username?: string;
  password?: string;
  email?: string;
  verification_code?: string;
  aff_code?: string;
}

export function affCode(): string {
  return crypto.randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 8);
}

/** What registration needs of the email codes (email/service.ts): a code checked and used up, true exactly once. */
export interface RegistrationCodes {
  consume(purpose: string, email: string, code: string): Promise<boolean>;
}

/**
 * Turns every API key of a user off or on at the edge (customers/tokens/service.ts createKeySwitch); `by`
 * names who did it in the edge's audit log. Fails (EDGE_UNAVAILABLE) when the edge cannot do it.
 */
export type KeySwitch = (userId: number, enabled: boolean, by: string) => Promise<void>;

/**
 * Account users: registration, lookups, rank rules and security changes. `onSignup` runs for each user who
 * registers (A41): the starting balance. `keys` stops a disabled or deleted user's API keys at the edge.
 */
export function createUsersService(
  ctx: AccountContext,
  sessions: SessionsService,
  mail: RegistrationCodes & SecurityNotices,
  onSignup: (userId: number) => Promise<void> = async () => {},
  keys: KeySwitch = async () => {},
) {
  const { db } = ctx.database;

  async function insertUser(input: {
    username: string;
    password: string | null;
    email?: string | null;
    role?: number;
    inviterId?: number | null;
    displayName?: string;
  }): Promise<number> {
    const passwordHash = input.password === null ? null : await hashPassword(input.password);
    for (let attempt = 0; ; attempt++) {
      try {
        return await usersStore.insert(db, {
          username: input.username,
          display_name: input.displayName ?? input.username,
          email: input.email || null,
          password_hash: passwordHash,
          role: input.role ?? ROLE.user,
          status: USER_STATUS.enabled,
          group: 'default',
          aff_code: affCode(),
          inviter_id: input.inviterId ?? null,
          auth_version: 1,
          access_token_hash: null,
          created_at: nowSeconds(),
          deleted_at: null,
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (await usersStore.byUsername(db, input.username)) throw new AppError('USERNAME_TAKEN');
        if (input.email && (await usersStore.byEmail(db, input.email))) throw new AppError('EMAIL_TAKEN');
        if (attempt >= 3) throw e; // aff_code collided repeatedly: not expected with 48 random bits
      }
    }
  }

  /** The reference's rule for staff actions on a user: root, or a role above the target's. */
  async function requireOutrank(actor: AccountIdentity, targetId: number): Promise<UserRow> {
    const target = await usersStore.byId(db, targetId);
    if (!target) throw new AppError('USER_NOT_FOUND');
    if (actor.role < ROLE.root && actor.role <= target.role) throw new AppError('USER_OUTRANKED');
    return target;
  }

  /** Changes role or status; every session of the user stops working at once. */
  async function setSecurity(userId: number, patch: { role?: number; status?: number }) {
    await usersStore.updateSecurity(db, userId, patch);
    await sessions.invalidateUser(userId);
  }

  return {
    insertUser,

    /** A41: self-registration with the reference's switches and validation. */
    async register(input: RegisterInput): Promise<number> {
      if (!ctx.config.registerEnabled) throw new AppError('REGISTER_DISABLED');
      if (!ctx.config.passwordRegisterEnabled) throw new AppError('PASSWORD_REGISTER_DISABLED');
      const username = (input.username ?? '').trim();
      const password = input.password ?? '';
      const email = (input.email ?? '').trim().toLowerCase();
      const invalid = (detail: string) => new AppError('REGISTER_INVALID_INPUT', { params: { detail } });
      if (!username) throw invalid('username is required');
      if ([...username].length > USERNAME_MAX) throw invalid(`username must be at most ${USERNAME_MAX} characters`);
      if (/[\s@]/.test(username)) throw invalid('username must not contain spaces or @');
      const problem = passwordProblem(password, { username, words: ctx.config.passwordContextWords });
      if (problem) throw invalid(problem);
      if (email && (email.length > EMAIL_MAX || !EMAIL.test(email))) throw invalid('email is not a valid address');
      if (ctx.config.emailVerificationEnabled) {
        if (!email || !input.verification_code) throw new AppError('REGISTER_EMAIL_VERIFICATION_REQUIRED');
        if (!(await mail.consume('register', email, input.verification_code))) throw new AppError('REGISTER_VERIFICATION_CODE_INVALID');
      }
      let inviterId: number | null = null;
      if (input.aff_code) inviterId = (await usersStore.byAffCode(db, input.aff_code.trim()))?.id ?? null;
      const id = await insertUser({ username, password, email: email || null, inviterId });
      await onSignup(id);
      return id;
    },

    requireOutrank,

    /** A live user by id (undefined when missing or deleted). */
    byId(userId: number): Promise<UserRow | undefined> {
      return usersStore.byId(db, userId);
    },

    /**
     * An admin who outranks the target removes one of its sign-in factors (A18, A22): `remove` runs in the
     * transaction that also bumps the target's auth version, then every session of the target ends.
     * `missing` is the error code when there was nothing to remove.
     */
    async removeFactorAsAdmin(
      admin: AccountIdentity,
      targetId: number,
      remove: (trx: Transaction<AccountDB>) => Promise<boolean>,
      missing: string,
      reason: string,
    ): Promise<UserRow> {
      const target = await requireOutrank(admin, targetId);
      const removed = await db.transaction().execute(async (trx) => {
        const r = await remove(trx);
        if (r) await usersStore.updateSecurity(trx, targetId, {});
        return r;
      });
      if (!removed) throw new AppError(missing);
      await sessions.invalidateUser(targetId);
      await sessions.revokeAllOfUser(targetId, reason);
      await mail.securityChanged(targetId, reason);
      return target;
    },

    async byUsernameOrThrow(username: string): Promise<UserRow> {
      const u = await usersStore.byUsername(db, username);
      if (!u || u.deleted_at) throw new Error(`user "${username}" not found`);
      return u;
    },

    setSecurity,

    /** The starting balance of a new user (QUOTA_FOR_NEW_USER): also for users an admin creates, as the reference. */
    grantStartingBalance: (userId: number) => onSignup(userId),

    /** A new password (already hashed): the auth version moves on, every session ends. */
    async replacePassword(userId: number, passwordHash: string, reason: string) {
      await usersStore.replacePassword(db, userId, passwordHash);
      await sessions.invalidateUser(userId);
      await sessions.revokeAllOfUser(userId, reason);
      await mail.securityChanged(userId, reason);
    },

    setGroup(userId: number, group: string) {
      return usersStore.setGroup(db, userId, group);
    },

    /**
     * Soft delete (the reference's ManageUser `delete`): the row stays for the usage it names; sessions end.
     * The user's keys are turned off at the edge first: when the edge cannot do it the user is left as it was.
     */
    async softDelete(userId: number, by: string): Promise<boolean> {
      await keys(userId, false, by);
      const deleted = await usersStore.softDelete(db, userId, nowSeconds());
      if (!deleted) return false;
      await sessions.invalidateUser(userId);
      await sessions.revokeAllOfUser(userId, 'user_deleted');
      return true;
    },

    /**
     * Stops the user from signing in, ends every session and stops every API key of the user at the edge
     * (CLI `user disable`, AS08 `disable`). The keys go first: when the edge cannot stop them the disable
     * fails (EDGE_UNAVAILABLE) and the user is left as it was, never disabled with its keys still working.
     */
    async disable(userId: number, by: string, reason = 'admin_disabled') {
      await keys(userId, false, by);
      await setSecurity(userId, { status: USER_STATUS.disabled });
      await sessions.revokeAllOfUser(userId, reason);
    },

    /**
     * Lets a disabled user sign in again and turns its API keys back on (each token as its user left it). The
     * user goes first: when the edge cannot turn the keys on the call fails (EDGE_UNAVAILABLE) with the user
     * enabled and its keys still off, and a repeat finishes it (never keys working for a disabled user).
     */
    async enable(userId: number, by: string) {
      await setSecurity(userId, { status: USER_STATUS.enabled });
      await keys(userId, true, by);
    },

    /** The usernames of these user ids (usage rows name their user); an unknown id is left out. */
    async usernamesOf(ids: number[]): Promise<Map<number, string>> {
      const unique = [...new Set(ids)];
      if (unique.length === 0) return new Map();
      return new Map((await usersStore.usernames(db, unique)).map((u) => [Number(u.id), u.username]));
    },

    /** The group of a live user, or null. */
    async groupOf(userId: number): Promise<string | null> {
      return (await usersStore.byId(db, userId))?.group ?? null;
    },

    /** The id of the user with this username (live or deleted), or null. */
    async idOfUsername(username: string): Promise<number | null> {
      const u = await usersStore.byUsername(db, username);
      return u ? Number(u.id) : null;
    },

    /** A page of live users for the admin list (AS05/AS06). */
    search(q: UserSearch, offset: number, limit: number) {
      return usersStore.search(db, q, offset, limit);
    },

    /** Issues a personal access token (shown once, stored as a hash). */
    async createAccessToken(userId: number): Promise<string> {
      const token = 'pat_' + randomToken(24);
      await usersStore.setAccessTokenHash(db, userId, sha256(token));
      return token;
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
