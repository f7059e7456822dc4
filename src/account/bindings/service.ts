import crypto from 'node:crypto';
import { AppError } from '../../kit/http/errors.js';
import { insertedId, isUniqueViolation } from '../../kit/db/index.js';
import { nowSeconds, ROLE, USER_STATUS } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import { USERNAME_MAX } from '../users/service.js';
import { bindingDb, bindingsStore, type BindingColumn, type BindingUserRow } from './store.js';
import { passkeyStore } from '../passkeys/store.js';

/** A sign-in identity kind: a built-in users column, or an operator-defined provider slug. */
export interface IdentityKind {
  slug: string;
  name: string;
  icon?: string;
  column: BindingColumn | null;
}

/** Built-in binding types of A19 and their columns ("email" clears the address). */
export const BUILT_IN: Record<string, { column: BindingColumn; name: string }> = {
  github: { column: 'github_id', name: 'GitHub' },
  discord: { column: 'discord_id', name: 'Discord' },
  oidc: { column: 'oidc_id', name: 'OIDC' },
  linuxdo: { column: 'linux_do_id', name: 'LinuxDO' },
  wechat: { column: 'wechat_id', name: 'WeChat' },
  telegram: { column: 'telegram_id', name: 'Telegram' },
};

/** The built-in type named by a request; own keys only, so "__proto__" or "constructor" is no type. */
function builtIn(slug: string) {
  return Object.hasOwn(BUILT_IN, slug) ? BUILT_IN[slug] : undefined;
}

function affCode(): string {
  return crypto.randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 8);
}

/**
 * Provider identities of users: lookup, bind, unbind, list, and sign-up through a provider (`onSignup`
 * runs for each user created so: the starting balance).
 */
export function createBindingsService(ctx: AccountContext, kinds: ReadonlyMap<string, IdentityKind>, onSignup: (userId: number) => Promise<void> = async () => {}) {
  const db = bindingDb(ctx);

  function kindOf(slug: string): IdentityKind | null {
    const known = builtIn(slug);
    return kinds.get(slug) ?? (known ? { slug, ...known } : null);
  }

  async function findUser(kind: IdentityKind, providerUserId: string): Promise<BindingUserRow | undefined> {
    return kind.column ? bindingsStore.userByColumn(db, kind.column, providerUserId) : bindingsStore.userByCustom(db, kind.slug, providerUserId);
  }

  async function identityOf(user: BindingUserRow, kind: IdentityKind): Promise<string | null> {
    if (kind.column) return user[kind.column] || null;
    const rows = await bindingsStore.customOf(db, Number(user.id));
    return rows.find((r) => r.provider_slug === kind.slug)?.provider_user_id ?? null;
  }

  /** Every sign-in method the user has: password, each bound identity, a passkey. */
  async function loginMethods(user: BindingUserRow): Promise<string[]> {
    const methods: string[] = [];
    if (user.password_hash) methods.push('password');
    for (const [slug, b] of Object.entries(BUILT_IN)) if (user[b.column]) methods.push(slug);
    for (const r of await bindingsStore.customOf(db, Number(user.id))) methods.push(r.provider_slug);
    if (await passkeyStore.registered(ctx.database.db, Number(user.id))) methods.push('passkey');
    return methods;
  }

  function view(kind: IdentityKind, providerUserId: string) {
    return { provider_id: kind.slug, provider_name: kind.name, provider_slug: kind.slug, provider_icon: kind.icon ?? '', provider_user_id: providerUserId };
  }

  return {
    kindOf,
    findUser,
    identityOf,
    loginMethods,

    userById: (id: number) => bindingsStore.userById(db, id),

    /** Binds an identity to a user; an identity held by anyone is refused with ACCOUNT_ALREADY_BOUND. */
    async bind(userId: number, kind: IdentityKind, providerUserId: string, code = 'ACCOUNT_ALREADY_BOUND') {
      const refused = () => new AppError(code, { params: { provider: kind.name } });
      if (await findUser(kind, providerUserId)) throw refused();
      try {
        if (kind.column) await bindingsStore.setColumn(db, userId, kind.column, providerUserId);
        else await bindingsStore.setCustom(db, userId, kind.slug, providerUserId, nowSeconds());
      } catch (e) {
        if (isUniqueViolation(e)) throw refused();
        throw e;
      }
    },

    /**
     * Creates a user signed up through a provider, with the identity bound, in one transaction. The
     * username is the provider's when it is free and short enough, else "<slug>_<n>".
     */
    async createUser(kind: IdentityKind, providerUserId: string, wanted: string, inviterId: number | null, displayName?: string) {
      const candidates: string[] = [];
      if (/^[A-Za-z0-9_.-]+$/.test(wanted) && wanted.length <= USERNAME_MAX) candidates.push(wanted);
      for (let i = 0; i < 4; i++) candidates.push(`${kind.slug}_${(await bindingsStore.maxUserId(db)) + 1 + i}`.slice(0, USERNAME_MAX));
      for (const username of candidates) {
        if (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirst()) continue;
        try {
          const created = await db.transaction().execute(async (trx) => {
            const id = await insertedId(
              trx,
              trx.insertInto('users').values({
                username,
                display_name: displayName ?? username,
                email: null,
                password_hash: null,
                role: ROLE.user,
                status: USER_STATUS.enabled,
                group: 'default',
                aff_code: affCode(),
                inviter_id: inviterId,
                auth_version: 1,
                access_token_hash: null,
                created_at: nowSeconds(),
                deleted_at: null,
                ...(kind.column ? { [kind.column]: providerUserId } : {}),
              }),
            );
            if (!kind.column) await bindingsStore.setCustom(trx, id, kind.slug, providerUserId, nowSeconds());
            return (await bindingsStore.userById(trx, id))!;
          });
          await onSignup(Number(created.id));
          return created;
        } catch (e) {
          if (!isUniqueViolation(e)) throw e;
          // The identity itself was claimed meanwhile: the caller logs that user in instead.
          const owner = await findUser(kind, providerUserId);
          if (owner) return owner;
        }
      }
      throw new AppError('USERNAME_TAKEN');
    },

    async inviterByAff(aff: string | undefined) {
      if (!aff) return null;
      const r = await db.selectFrom('users').select('id').where('aff_code', '=', aff.trim()).where('deleted_at', 'is', null).executeTakeFirst();
      return r ? Number(r.id) : null;
    },

    /** A31 / A20: every identity bound to the user (built-in and operator-defined). */
    async list(userId: number) {
      const user = await bindingsStore.userById(db, userId);
      if (!user) throw new AppError('USER_NOT_FOUND');
      const out = [];
      for (const slug of Object.keys(BUILT_IN)) {
        const kind = kindOf(slug)!;
        if (user[kind.column!]) out.push(view(kind, user[kind.column!]!));
      }
      for (const r of await bindingsStore.customOf(db, userId)) {
        out.push(view(kindOf(r.provider_slug) ?? { slug: r.provider_slug, name: r.provider_slug, column: null }, r.provider_user_id));
      }
      return out;
    },

    /** A32 / A21: removes one binding; keepLastMethod refuses to remove the user's last way to sign in. */
    async unbind(userId: number, providerId: string, keepLastMethod: boolean) {
      const user = await bindingsStore.userById(db, userId);
      if (!user) throw new AppError('USER_NOT_FOUND');
      const kind = kindOf(providerId) ?? { slug: providerId, name: providerId, column: null };
      if (!(await identityOf(user, kind))) throw new AppError('OAUTH_BINDING_NOT_FOUND');
      if (keepLastMethod && (await loginMethods(user)).filter((m) => m !== kind.slug).length === 0) throw new AppError('LAST_LOGIN_METHOD');
      if (kind.column) await bindingsStore.setColumn(db, userId, kind.column, null);
      else await bindingsStore.deleteCustom(db, userId, kind.slug);
      return { user, kind };
    },

    /** A19: clears a built-in binding column (or the email address). */
    async clear(userId: number, bindingType: string) {
      const user = await bindingsStore.userById(db, userId);
      if (!user) throw new AppError('USER_NOT_FOUND');
      const column = builtIn(bindingType)?.column;
      if (bindingType === 'email') await bindingsStore.setEmail(db, userId, null);
      else if (column) await bindingsStore.setColumn(db, userId, column, null);
      else throw new AppError('BINDING_TYPE_INVALID');
      return user;
    },

  };
}

export type BindingsService = ReturnType<typeof createBindingsService>;
