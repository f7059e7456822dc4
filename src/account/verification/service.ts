import { AppError } from '../../kit/http/errors.js';
import { verifyPassword } from '../../kit/crypto/password.js';
import { nowSeconds, USER_STATUS } from '../db.js';
import { usersStore, type UserRow } from '../users/store.js';
import { passkeyStore } from '../passkeys/store.js';
import { sessionsStore } from '../sessions/store.js';
import type { ClientInfo, SessionsService } from '../sessions/service.js';
import type { PasswordEncryption, PasswordInput } from '../login/password-encryption.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { FlowsService } from '../flows/service.js';
import type { TwoFactorService } from '../two-factor/service.js';
import type { BindingsService } from '../bindings/service.js';
import type { Provider } from '../oauth/providers.js';
import { CODE_PROOF_SCOPES, FALLBACK_SCOPES, NEEDS_TOTP, RECENT_LOGIN_SCOPES, normaliseContext, wireScope, type WireScope } from './scopes.js';
import { createProofs } from './proofs.js';

export const LOGIN_FLOW_TTL_SECONDS = 300;
const LOCKED_REASON = 'Two-factor authentication is temporarily locked.';
const NO_OAUTH_REASON = 'No OAuth provider is linked to this account.';

/** What a login needs after the first factor passed: a second-step challenge, or null (log in directly). */
export type PrimaryLoginOutcome = { kind: 'challenge'; data: Record<string, unknown> } | null;

export interface MethodOption {
  method: '2fa' | 'passkey' | 'password' | 'oauth';
  available: boolean;
  reason?: string;
}

export interface LoginFlowPayload {
  uv: number;
  login_method: string;
}

export interface VerifyInput extends PasswordInput {
  method?: string;
  scope?: string;
  context?: unknown;
  code?: string;
}

/** Which factors count for logins and step-up, login verification (A30) and proofs (A47, A48). */
export function createVerificationService(
  ctx: AccountContext,
  peers: {
    flows: FlowsService;
    sessions: SessionsService;
    twoFactor: TwoFactorService;
    encryption: PasswordEncryption;
    bindings: BindingsService;
    /** The login providers (oauth/providers.ts): a bound identity counts for the `oauth` method while its provider is enabled. */
    providers: ReadonlyMap<string, Provider>;
  },
) {
  const { flows, sessions, twoFactor, encryption, bindings, providers } = peers;
  const { db } = ctx.database;
  const proofs = createProofs(ctx, flows);

  /** The user's enrolled factors as methods; unavailable while TOTP is locked or passkeys are off. */
  async function factorMethods(userId: number): Promise<MethodOption[]> {
    const methods: MethodOption[] = [];
    const totp = await twoFactor.state(userId);
    if (totp.enabled) methods.push(totp.locked ? { method: '2fa', available: false, reason: LOCKED_REASON } : { method: '2fa', available: true });
    if (await passkeyStore.byUser(db, userId)) {
      methods.push(ctx.config.passkey.enabled ? { method: 'passkey', available: true } : { method: 'passkey', available: false, reason: 'Passkey is disabled.' });
    }
    return methods;
  }

  /** The reference's policy: enrolled factors; without any, the password (or OAuth) for the fallback scopes. */
  async function methodsFor(user: UserRow, scope: WireScope): Promise<MethodOption[]> {
    const totp = await twoFactor.state(Number(user.id));
    if (NEEDS_TOTP.has(scope) && !totp.enabled) return [];
    const methods = await factorMethods(Number(user.id));
    if (methods.length === 0 && FALLBACK_SCOPES.has(scope)) {
      if (user.password_hash) {
        const off = !ctx.config.passwordLoginEnabled && scope.startsWith('account.binding.');
        methods.push(off ? { method: 'password', available: false, reason: 'Password authentication is disabled.' } : { method: 'password', available: true });
      } else {
        const linked = (await oauthProviders(Number(user.id))).length > 0;
        methods.push(linked ? { method: 'oauth', available: true } : { method: 'oauth', available: false, reason: NO_OAUTH_REASON });
      }
    }
    return methods;
  }

  /** The enabled OAuth providers (A05/A01 ones) the user is linked to, as [{slug, name}] sorted by slug. */
  async function oauthProviders(userId: number): Promise<{ slug: string; name: string }[]> {
    const out = [];
    for (const b of await bindings.list(userId)) {
      const p = providers.get(b.provider_slug);
      if (p?.enabled) out.push({ slug: p.slug, name: p.name });
    }
    return out.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  /** Throws unless the `oauth` method is available to the user for this scope (policy and linked provider). */
  async function requireOAuthMethod(user: UserRow, scope: WireScope, provider?: string) {
    const option = (await methodsFor(user, scope)).find((m) => m.method === 'oauth');
    if (!option?.available) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
    if (provider && !(await oauthProviders(Number(user.id))).some((p) => p.slug === provider)) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
  }

  /**
   * The session signed in less than SECURITY_RECENT_LOGIN_SECONDS ago (refreshes keep the sign-in time) and
   * the scope adds a factor of a kind the user does not have: a passkey registered while one exists would
   * replace it, so it needs a proof.
   */
  async function recentLoginCounts(identity: AccountIdentity, scope: WireScope): Promise<boolean> {
    const window = ctx.config.securityRecentLoginSeconds;
    if (window <= 0 || !identity.sid || !RECENT_LOGIN_SCOPES.has(scope)) return false;
    const session = await sessionsStore.bySid(db, identity.sid);
    if (!session || Number(session.user_id) !== identity.userId || Number(session.created_at) <= nowSeconds() - window) return false;
    if (scope === '2fa.setup') return !(await twoFactor.state(identity.userId)).enabled;
    return !(await passkeyStore.byUser(db, identity.userId));
  }

  async function userOf(identity: AccountIdentity) {
    const user = await usersStore.byId(db, identity.userId);
    if (!user) throw new AppError('AUTH_SESSION_REVOKED');
    return user;
  }

  return {
    proofs,
    factorMethods,
    methodsFor,

    /** The second-factor branch of every login: a 5-minute login_verification flow when the user has a factor. */
    async loginChallenge(user: UserRow, loginMethod: string): Promise<PrimaryLoginOutcome> {
      const methods = await factorMethods(Number(user.id));
      if (methods.length === 0) return null;
      if (!methods.some((m) => m.available)) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
      const flow = await flows.create<LoginFlowPayload>({
        purpose: 'login_verification',
        ttlSeconds: LOGIN_FLOW_TTL_SECONDS,
        userId: Number(user.id),
        payload: { uv: user.auth_version, login_method: loginMethod },
      });
      // Gen A's `require_2fa` beside the Gen B shape: new-api's dashboard asks for the TOTP code when it is true.
      const requireTotp = methods.some((m) => m.method === '2fa') ? { require_2fa: true } : {};
      return { kind: 'challenge', data: { require_verification: true, ...requireTotp, flow_token: flow.token, expires_at: flow.expiresAt, methods } };
    },

    /** A live login flow and its user, unchanged since the first factor; AUTH_FLOW_INVALID otherwise. */
    async loginFlow(token: string) {
      const flow = await flows.peek<LoginFlowPayload>(token, 'login_verification');
      if (!flow || flow.userId === null) throw new AppError('AUTH_FLOW_INVALID');
      const user = await usersStore.byId(db, flow.userId);
      if (!user || user.status !== USER_STATUS.enabled || user.auth_version !== flow.payload.uv) throw new AppError('AUTH_FLOW_INVALID');
      return { flow, user };
    },

    /** Consumes the login flow (exactly once) and issues the session under the primary login method. */
    async finishLogin(token: string, user: UserRow, client: ClientInfo) {
      const flow = await flows.consume<LoginFlowPayload>(token, 'login_verification');
      if (!flow) throw new AppError('AUTH_FLOW_INVALID');
      return sessions.issue(user, flow.payload.login_method, client);
    },

    /** A30 / A26: second step with a TOTP or backup code. */
    async verifyLogin(input: { flow_token?: string; method?: string; code?: string }, client: ClientInfo) {
      const token = input.flow_token?.trim();
      const code = input.code?.trim();
      if (!token || !code) throw new AppError('LOGIN_INVALID_PARAMETERS');
      if ((input.method?.trim() || '2fa') !== '2fa') throw new AppError('SECURITY_PROOF_METHOD_MISMATCH');
      const { user } = await this.loginFlow(token);
      try {
        await twoFactor.verify(Number(user.id), code);
      } catch (e) {
        if (e instanceof AppError && e.code === 'TWOFA_NOT_ENABLED') throw new AppError('SECURITY_METHOD_UNAVAILABLE');
        throw e;
      }
      return this.finishLogin(token, user, client);
    },

    /** A48. */
    async methods(identity: AccountIdentity, scopeName: string | undefined) {
      const scope = wireScope(scopeName);
      const methods = await methodsFor(await userOf(identity), scope);
      return { scope, methods, oauth_providers: await oauthProviders(identity.userId), password_encryption_enabled: ctx.config.passwordLoginEncryptionEnabled };
    },

    /**
     * Checks and consumes a step-up security proof (header X-Security-Proof; see requireSecurityProof). A refused proof (403 SECURITY_PROOF_*) carries in `data` what the client
     * needs to get one: the scope and its methods exactly as A48 lists them.
     */
    async verifyProof(identity: AccountIdentity, scopeName: string, context: Record<string, unknown>, token: string | undefined, sent: { code?: string } = {}) {
      if (token === undefined) {
        const scope = wireScope(scopeName);
        if (await recentLoginCounts(identity, scope)) return { method: 'recent_login', scope };
        // The code sent with the request is A47's `2fa` method for this scope, passed in place: same lockout, replay guard, backup rule.
        if (sent.code?.trim() && CODE_PROOF_SCOPES.has(scope)) {
          if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
          await twoFactor.verify(identity.userId, sent.code, { allowBackup: scope !== '2fa.backup_codes.regenerate' });
          return { method: '2fa', scope };
        }
      }
      try {
        return await proofs.verify(identity, scopeName, context, token);
      } catch (e) {
        if (!(e instanceof AppError) || !e.code.startsWith('SECURITY_PROOF_') || e.options.data !== undefined) throw e;
        throw new AppError(e.code, { ...e.options, data: await this.methods(identity, scopeName) });
      }
    },

    /**
     * A05 intent `verify`: the normalised scope and context (A47's rules) of an OAuth step-up, refused
     * unless the policy offers `oauth` for that scope and the user is linked to `provider`.
     */
    async startOAuthVerify(identity: AccountIdentity, provider: string, scopeName: string | undefined, rawContext: unknown) {
      const scope = wireScope(scopeName);
      const context = normaliseContext(scope, rawContext);
      await requireOAuthMethod(await userOf(identity), scope, provider);
      return { scope, context };
    },

    /** A01 of a verify flow, after the provider vouched for the user's bound identity: the `oauth` proof. */
    async issueOAuthProof(identity: AccountIdentity, provider: string, scopeName: string, rawContext: unknown) {
      const scope = wireScope(scopeName);
      const context = normaliseContext(scope, rawContext);
      await requireOAuthMethod(await userOf(identity), scope, provider);
      return proofs.issue(identity, scope, context, 'oauth');
    },

    /** A47: passes the 2fa or password method for one scope and returns a security proof. */
    async verify(identity: AccountIdentity, input: VerifyInput) {
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const scope = wireScope(input.scope);
      const context = normaliseContext(scope, input.context);
      const method = (input.method ?? '').trim();
      if (method === 'passkey' || method === 'oauth') throw new AppError('SECURITY_VERIFICATION_FLOW_REQUIRED');
      if (method !== '2fa' && method !== 'password') throw new AppError('SECURITY_PROOF_METHOD_MISMATCH');
      const user = await userOf(identity);
      const option = (await methodsFor(user, scope)).find((m) => m.method === method);
      if (!option) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
      if (!option.available) throw new AppError(option.reason === LOCKED_REASON ? 'SECURITY_VERIFICATION_LOCKED' : 'SECURITY_METHOD_UNAVAILABLE');
      if (method === '2fa') {
        if (!input.code?.trim()) throw new AppError('SECURITY_VERIFICATION_FAILED');
        // Regenerating backup codes needs the authenticator itself, not one of the codes being replaced.
        await twoFactor.verify(identity.userId, input.code, { allowBackup: scope !== '2fa.backup_codes.regenerate' });
      } else {
        const password = await encryption.passwordFrom(input);
        const check = await verifyPassword(password === null ? null : user.password_hash, password ?? '');
        if (!check.valid) throw new AppError('SECURITY_VERIFICATION_FAILED');
      }
      return proofs.issue(identity, scope, context, method);
    },
  };
}

export type VerificationService = ReturnType<typeof createVerificationService>;
