import { AppError } from '../../kit/http/errors.js';
import { hashPassword } from '../../kit/crypto/password.js';
import { ROLE } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import { USERNAME_MAX, type UsersService } from '../users/service.js';
import { passwordProblem } from '../users/password-policy.js';
import { DISPLAY_NAME_MAX } from '../dashboard/self.js';
import { generatedPassword, type ResetService } from '../reset/service.js';

/** A group name as the edge keeps it on tokens and prices. */
const GROUP = /^[A-Za-z0-9_.-]{1,64}$/;

export interface NewUser {
  username?: string;
  password?: string;
  display_name?: string;
  role?: number;
}

const invalid = (detail: string) => new AppError('USER_INPUT_INVALID', { params: { detail } });

/**
 * What an admin changes about a user beyond AS08 (additions for the account console): create a user (the
 * reference's CreateUser), give a user a generated password or a reset link, move a user to another group. The reference's
 * rank rules: a new user's role is below the creator's; other changes need an admin who outranks the user,
 * never on their own account.
 */
export function createUserChanges(ctx: AccountContext, users: UsersService, reset: ResetService) {
  async function outranked(admin: AccountIdentity, id: number) {
    if (id === admin.userId) throw new AppError('USER_MANAGE_SELF');
    return users.requireOutrank(admin, id);
  }

  return {
    /** AS18: a user with a password (checked as at registration), a display name and a role below the caller's. */
    async create(admin: AccountIdentity, input: NewUser) {
      const username = (input.username ?? '').trim();
      const password = input.password ?? '';
      const displayName = (input.display_name ?? '').trim() || username;
      const role = input.role ?? ROLE.user;
      if (!username) throw invalid('username is required');
      if ([...username].length > USERNAME_MAX) throw invalid(`username must be at most ${USERNAME_MAX} characters`);
      if (/[\s@]/.test(username)) throw invalid('username must not contain spaces or @');
      if ([...displayName].length > DISPLAY_NAME_MAX) throw invalid(`display_name must be at most ${DISPLAY_NAME_MAX} characters`);
      if (role >= admin.role) throw new AppError('USER_CREATE_ROLE');
      if (role !== ROLE.user && role !== ROLE.admin) throw invalid(`role must be ${ROLE.user} (user) or ${ROLE.admin} (admin)`);
      const problem = passwordProblem(password, { username, words: ctx.config.passwordContextWords });
      if (problem) throw invalid(problem);
      const id = await users.insertUser({ username, password, role, displayName });
      await users.grantStartingBalance(id);
      ctx.log.info({ audit: 'user.create', admin_id: admin.userId, target_id: id, target_username: username, role }, 'user created');
      return { id, username, display_name: displayName, role };
    },

    /**
     * AS19: a new generated password for a user who cannot reset it by mail, shown once to the admin to hand
     * over; every session of the user ends and the user is told by mail (when an address is bound).
     */
    async resetPassword(admin: AccountIdentity, id: number) {
      const target = await outranked(admin, id);
      const password = generatedPassword();
      await users.replacePassword(id, await hashPassword(password), 'admin_password_reset');
      ctx.log.info({ audit: 'user.password_reset', admin_id: admin.userId, target_id: id, target_username: target.username }, 'user password reset by an admin');
      return { id, password };
    },

    /**
     * AS21: a single-use reset link for the admin to hand over: the user chooses the new password on the
     * console's reset page (A42), which ends every session of the user. Nothing changes until it is used.
     */
    async resetLink(admin: AccountIdentity, id: number, baseUrl: string) {
      const target = await outranked(admin, id);
      const { link, expires_at } = await reset.issueLink(id, baseUrl);
      ctx.log.info({ audit: 'user.password_reset_link', admin_id: admin.userId, target_id: id, target_username: target.username, expires_at }, 'password reset link made by an admin');
      return { id, link, expires_at };
    },

    /** AS20: the user's group (the prices it pays: the group ratio); its sessions and keys stay. */
    async setGroup(admin: AccountIdentity, id: number, rawGroup: string | undefined) {
      const group = (rawGroup ?? '').trim();
      if (!GROUP.test(group)) throw invalid('group must be 1 to 64 of A-Z a-z 0-9 _ . -');
      const target = await outranked(admin, id);
      await users.setGroup(id, group);
      ctx.log.info({ audit: 'user.group', admin_id: admin.userId, target_id: id, target_username: target.username, from: target.group, to: group }, 'user group changed');
      return { id, group };
    },
  };
}

export type UserChanges = ReturnType<typeof createUserChanges>;
