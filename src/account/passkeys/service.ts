import type { Transaction } from 'kysely';
import { AppError } from '../../kit/http/errors.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { sha256 } from '../../kit/crypto/tokens.js';
import { nowSeconds, USER_STATUS, type AccountDB } from '../db.js';
import type { UserRow } from '../users/store.js';
import type { ClientInfo, SessionsService } from '../sessions/service.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { FlowsService } from '../flows/service.js';
import type { UsersService } from '../users/service.js';
import type { VerificationService } from '../verification/service.js';
import { normaliseContext, wireScope, type WireScope } from '../verification/scopes.js';
import { passkeyStore, type PasskeyRow } from './store.js';
import * as webauthn from './webauthn.js';

const FLOW_TTL_SECONDS = 300;

interface Ceremony {
  challenge: string;
  uv?: number;
  /** A28: sha256 of the login flow token this ceremony belongs to. */
  link?: string;
  scope?: WireScope;
  context?: Record<string, string>;
}

/** Passkeys (WebAuthn): registration, passwordless login, second login step and step-up. */
export function createPasskeysService(
  ctx: AccountContext,
  { flows, users, sessions, verification }: { flows: FlowsService; users: UsersService; sessions: SessionsService; verification: VerificationService },
) {
  const { db } = ctx.database;
  const cfg = ctx.config.passkey;

  async function ceremony(purpose: 'passkey_register' | 'passkey_login' | 'login_passkey' | 'passkey_step_up', payload: Ceremony, identity?: AccountIdentity) {
    return flows.create<Ceremony>({
      purpose,
      ttlSeconds: FLOW_TTL_SECONDS,
      userId: identity?.userId ?? null,
      sessionId: identity?.sid ?? null,
      payload,
    });
  }

  /** Checks an assertion with the user's stored credential and moves its counter forward (once). */
  async function assert(user: { id: number }, credential: PasskeyRow, response: unknown, challenge: string) {
    if (webauthn.credentialIdOf(response) !== credential.credential_id) throw new AppError('PASSKEY_VERIFICATION_FAILED');
    const counter = await webauthn.checkAssertion(cfg, response, challenge, credential);
    if (!(await passkeyStore.markUsed(db, Number(user.id), Number(credential.counter), counter, nowSeconds()))) {
      throw new AppError('PASSKEY_VERIFICATION_FAILED');
    }
  }

  async function credentialOf(userId: number) {
    const c = await passkeyStore.byUser(db, userId);
    if (!c) throw new AppError('PASSKEY_NOT_REGISTERED');
    return c;
  }

  return {
    /** A34. */
    async status(userId: number) {
      const c = await passkeyStore.byUser(db, userId);
      return c ? { enabled: true, last_used_at: c.last_used_at === null ? null : Number(c.last_used_at) } : { enabled: false };
    },

    /** A37 (after the PasskeyRegister proof): creation options in a 5-minute flow bound to the session. */
    async beginRegister(identity: AccountIdentity, rpHint?: string) {
      webauthn.rpIdFor(cfg, rpHint);
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const user = await users.byId(identity.userId);
      if (!user) throw new AppError('AUTH_SESSION_REVOKED');
      const existing = await passkeyStore.byUser(db, identity.userId);
      const options = await webauthn.registrationOptions(cfg, { id: Number(user.id), username: user.username, display_name: user.display_name }, existing);
      const flow = await ceremony('passkey_register', { challenge: options.challenge, uv: identity.authVersion }, identity);
      return { options: webauthn.withPublicKey(options), flow_token: flow.token, expires_at: flow.expiresAt };
    },

    /** A38: stores the credential (replacing an earlier one: one passkey per user) and rotates authority. */
    async finishRegister(identity: AccountIdentity, flowToken: string | undefined, response: unknown) {
      webauthn.rpIdFor(cfg, undefined);
      const flow = await flows.consume<Ceremony>(flowToken, 'passkey_register');
      // The proof passed at A37 is still valid only for the same session at the same auth version.
      if (!flow || flow.userId !== identity.userId || flow.sessionId !== identity.sid || flow.payload.uv !== identity.authVersion) {
        throw new AppError('AUTH_FLOW_INVALID');
      }
      const c = await webauthn.checkRegistration(cfg, response, flow.payload.challenge);
      try {
        await db.transaction().execute(async (trx) => {
          await passkeyStore.remove(trx, identity.userId);
          await passkeyStore.insert(trx, {
            user_id: identity.userId,
            credential_id: c.id,
            public_key: c.publicKey,
            counter: c.counter,
            rp_id: cfg.rpId,
            transports: c.transports,
            user_handle: null,
            created_at: nowSeconds(),
            last_used_at: null,
          });
        });
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('PASSKEY_VERIFICATION_FAILED');
        throw e;
      }
      return sessions.rotateAuthority(identity, 'passkey_registered');
    },

    /** A33 (after the PasskeyDelete proof). */
    async remove(identity: AccountIdentity) {
      if (!(await passkeyStore.remove(db, identity.userId))) throw new AppError('PASSKEY_NOT_REGISTERED');
      return sessions.rotateAuthority(identity, 'passkey_deleted');
    },

    /** Passkeys per user among these (the admin user list). */
    countsOf(userIds: number[]) {
      return passkeyStore.countsOf(db, userIds);
    },

    registered(userId: number) {
      return passkeyStore.registered(db, userId);
    },

    /** A22: an outranking admin removes the user's passkey; every session of the user ends. */
    async adminReset(admin: AccountIdentity, targetId: number) {
      const remove = (trx: Transaction<AccountDB>) => passkeyStore.remove(trx, targetId);
      const target = await users.removeFactorAsAdmin(admin, targetId, remove, 'PASSKEY_NOT_REGISTERED', 'admin_passkey_reset');
      return { id: Number(target.id), username: target.username };
    },

    /** A35: discoverable-credential login options. */
    async beginLogin(rpHint?: string) {
      const rpId = webauthn.rpIdFor(cfg, rpHint);
      const options = await webauthn.assertionOptions(cfg);
      const flow = await ceremony('passkey_login', { challenge: options.challenge });
      return { options: webauthn.withPublicKey(options), rp_ids: [rpId], flow_token: flow.token, expires_at: flow.expiresAt };
    },

    /** A36: the passkey counts as both factors; the session is created directly. */
    async finishLogin(flowToken: string | undefined, response: unknown, client: ClientInfo) {
      webauthn.rpIdFor(cfg, undefined);
      const flow = await flows.consume<Ceremony>(flowToken, 'passkey_login');
      if (!flow) throw new AppError('AUTH_FLOW_INVALID');
      const id = webauthn.credentialIdOf(response);
      const credential = id ? await passkeyStore.byCredentialId(db, id) : undefined;
      if (!credential || webauthn.userHandleIn(response) !== (credential.user_handle ?? webauthn.userHandleOf(Number(credential.user_id)))) {
        throw new AppError('PASSKEY_VERIFICATION_FAILED');
      }
      const user = await users.byId(Number(credential.user_id));
      if (!user || user.status !== USER_STATUS.enabled) throw new AppError('PASSKEY_VERIFICATION_FAILED');
      await assert(user, credential, response, flow.payload.challenge);
      return sessions.issue(user, 'passkey', client);
    },

    /** A28: a passkey ceremony linked to a login verification flow. */
    async beginSecondStep(loginFlowToken: string | undefined, rpHint?: string) {
      const rpId = webauthn.rpIdFor(cfg, rpHint);
      if (!loginFlowToken) throw new AppError('LOGIN_INVALID_PARAMETERS');
      const { user } = await verification.loginFlow(loginFlowToken);
      const credential = await passkeyStore.byUser(db, Number(user.id));
      if (!credential) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
      const options = await webauthn.assertionOptions(cfg, credential);
      const flow = await ceremony('login_passkey', { challenge: options.challenge, link: sha256(loginFlowToken) });
      return { flow_token: flow.token, expires_at: flow.expiresAt, options: webauthn.withPublicKey(options), rp_ids: [rpId] };
    },

    /** A29: finishes the login flow with the passkey and returns the session. */
    async finishSecondStep(loginFlowToken: string | undefined, passkeyFlowToken: string | undefined, response: unknown, client: ClientInfo) {
      webauthn.rpIdFor(cfg, undefined);
      if (!loginFlowToken || !passkeyFlowToken) throw new AppError('LOGIN_INVALID_PARAMETERS');
      const flow = await flows.consume<Ceremony>(passkeyFlowToken, 'login_passkey');
      if (!flow || flow.payload.link !== sha256(loginFlowToken)) throw new AppError('AUTH_FLOW_INVALID');
      const { user } = await verification.loginFlow(loginFlowToken);
      await assert(user, await credentialOf(Number(user.id)), response, flow.payload.challenge);
      return verification.finishLogin(loginFlowToken, user, client);
    },

    /** A39: a step-up ceremony for one verification scope. */
    async beginStepUp(identity: AccountIdentity, input: { scope?: string; context?: unknown; rp_id?: string }) {
      const rpId = webauthn.rpIdFor(cfg, input.rp_id);
      if (!identity.sid) throw new AppError('AUTH_SESSION_REQUIRED');
      const scope = wireScope(input.scope);
      const context = normaliseContext(scope, input.context);
      const user = (await users.byId(identity.userId)) as UserRow;
      const option = (await verification.methodsFor(user, scope)).find((m) => m.method === 'passkey');
      if (!option?.available) throw new AppError('SECURITY_METHOD_UNAVAILABLE');
      const options = await webauthn.assertionOptions(cfg, await credentialOf(identity.userId));
      const flow = await ceremony('passkey_step_up', { challenge: options.challenge, uv: identity.authVersion, scope, context }, identity);
      return { flow_token: flow.token, expires_at: flow.expiresAt, options: webauthn.withPublicKey(options), rp_ids: [rpId] };
    },

    /** A40: the assertion passed, a security proof for the scope of A39. */
    async finishStepUp(identity: AccountIdentity, flowToken: string | undefined, response: unknown) {
      webauthn.rpIdFor(cfg, undefined);
      const flow = await flows.consume<Ceremony>(flowToken, 'passkey_step_up');
      if (!flow || flow.userId !== identity.userId || flow.sessionId !== identity.sid || flow.payload.uv !== identity.authVersion) {
        throw new AppError('AUTH_FLOW_INVALID');
      }
      await assert({ id: identity.userId }, await credentialOf(identity.userId), response, flow.payload.challenge);
      return verification.proofs.issue(identity, flow.payload.scope!, flow.payload.context ?? {}, 'passkey');
    },
  };
}

export type PasskeysService = ReturnType<typeof createPasskeysService>;
