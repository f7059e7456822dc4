import * as oauth from 'oauth4webapi';
import { AppError, type Lang } from '../../kit/http/errors.js';
import { USER_STATUS } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { ClientInfo } from '../sessions/service.js';
import type { LoginOutcome, LoginService } from '../login/service.js';
import type { FlowsService } from '../flows/service.js';
import type { VerificationService } from '../verification/service.js';
import type { UserRow } from '../users/store.js';
import type { BindingsService } from '../bindings/service.js';
import type { EmailService } from '../email/service.js';
import { authorizationUrl, exchangeCode, type Provider } from './providers.js';

export const OAUTH_FLOW_TTL_SECONDS = 600;

interface OAuthFlowPayload {
  verifier: string;
  nonce: string;
  redirect_uri: string;
  aff?: string;
  /** intent verify: the normalised step-up scope and context, and the auth version at start. */
  verify?: { scope: string; context: Record<string, string>; uv: number };
}

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
  iss?: string;
}

type Proof = Awaited<ReturnType<VerificationService['issueOAuthProof']>>;

export type CallbackOutcome =
  | LoginOutcome
  | { kind: 'bind'; data: { action: 'bind'; provider: string; notification_warning: boolean } }
  | { kind: 'verify'; data: Proof };

const INTENTS = new Set(['login', 'bind', 'verify']);

/** A05 and A01: OAuth flows whose token is the OAuth state, login or registration, and binding. */
export function createOAuthService(
  ctx: AccountContext,
  peers: {
    providers: ReadonlyMap<string, Provider>;
    bindings: BindingsService;
    email: EmailService;
    flows: FlowsService;
    login: LoginService;
    verification: VerificationService;
  },
) {
  const { providers, bindings, email, flows, login, verification } = peers;
  const cfg = ctx.config.mailOAuth.oauth;

  function provider(slug: string): Provider {
    const p = providers.get(slug);
    if (!p) throw new AppError('OAUTH_UNKNOWN_PROVIDER');
    if (!p.enabled) throw new AppError('OAUTH_PROVIDER_DISABLED', { params: { provider: p.name } });
    return p;
  }

  async function loginOrRegister(p: Provider, id: string, username: string, aff: string | undefined, client: ClientInfo): Promise<LoginOutcome> {
    let user = await bindings.findUser(p, id);
    if (user?.deleted_at) throw new AppError('OAUTH_USER_DELETED');
    if (!user) {
      if (!ctx.config.registerEnabled) throw new AppError('REGISTER_DISABLED');
      user = await bindings.createUser(p, id, username, await bindings.inviterByAff(aff));
    }
    if (user.status !== USER_STATUS.enabled) throw new AppError('OAUTH_USER_BANNED');
    return login.completeLogin(user as UserRow, `oauth:${p.slug}`, client);
  }

  /** A verify flow: the provider must vouch for the identity bound to this very user; then the `oauth` proof. */
  async function verified(p: Provider, providerUserId: string, v: OAuthFlowPayload['verify'], identity: AccountIdentity) {
    if (!v || v.uv !== identity.authVersion) throw new AppError('OAUTH_FLOW_SESSION_MISMATCH');
    const owner = await bindings.findUser(p, providerUserId);
    if (!owner || Number(owner.id) !== identity.userId) throw new AppError('OAUTH_VERIFY_IDENTITY_MISMATCH', { params: { provider: p.name } });
    return verification.issueOAuthProof(identity, p.slug, v.scope, v.context);
  }

  return {
    providers,
    provider,

    /** A05: a purpose-bound flow; its token is the state of the provider's authorization URL. */
    async start(input: { provider: string; intent: string; aff?: string; scope?: string; context?: unknown }, identity: AccountIdentity | undefined, redirectBase: string) {
      const p = provider(input.provider);
      if (!INTENTS.has(input.intent)) {
        throw new AppError('OAUTH_INVALID_REQUEST', { params: { detail: 'intent must be login, bind or verify' } });
      }
      if (input.aff && (input.intent !== 'login' || input.aff.length > 32)) {
        throw new AppError('OAUTH_INVALID_REQUEST', { params: { detail: 'aff is only for login and at most 32 characters' } });
      }
      if (input.intent !== 'verify' && (input.scope !== undefined || input.context !== undefined)) {
        throw new AppError('OAUTH_INVALID_REQUEST', { params: { detail: 'scope and context are only for verify' } });
      }
      const bound = input.intent !== 'login';
      if (bound && !identity?.sid) throw new AppError('OAUTH_BIND_LOGIN_REQUIRED');
      const verify =
        input.intent === 'verify'
          ? { ...(await verification.startOAuthVerify(identity!, p.slug, input.scope, input.context)), uv: identity!.authVersion }
          : undefined;
      const payload: OAuthFlowPayload = {
        verifier: oauth.generateRandomCodeVerifier(),
        nonce: oauth.generateRandomNonce(),
        redirect_uri: `${redirectBase}/oauth/${p.slug}`,
        ...(input.aff ? { aff: input.aff } : {}),
        ...(verify ? { verify } : {}),
      };
      const flow = await flows.create({
        purpose: 'oauth',
        ttlSeconds: OAUTH_FLOW_TTL_SECONDS,
        userId: bound ? identity!.userId : null,
        sessionId: bound ? identity!.sid! : null,
        provider: p.slug,
        intent: input.intent,
        payload,
      });
      let url: string;
      try {
        url = await authorizationUrl(p, { state: flow.token, redirectUri: payload.redirect_uri, verifier: payload.verifier, nonce: payload.nonce });
      } catch (e) {
        ctx.log.warn({ provider: p.slug, err: { message: (e as Error).message } }, 'OAuth discovery failed');
        throw new AppError('OAUTH_EXCHANGE_FAILED', { params: { provider: p.name } });
      }
      return { flow_token: flow.token, expires_at: flow.expiresAt, authorization_url: url };
    },

    /** A01: the provider's redirect, forwarded by the dashboard with the caller's bearer for bind flows. */
    async callback(slug: string, q: CallbackQuery, identity: AccountIdentity | undefined, client: ClientInfo, lang: Lang): Promise<CallbackOutcome> {
      const p = provider(slug);
      const state = q.state ?? '';
      const peeked = await flows.peek<OAuthFlowPayload>(state, 'oauth');
      if (!peeked || peeked.provider !== p.slug) throw new AppError('OAUTH_STATE_INVALID');
      if (peeked.intent !== 'login' && (identity?.userId !== peeked.userId || identity?.sid !== peeked.sessionId)) {
        throw new AppError('OAUTH_FLOW_SESSION_MISMATCH');
      }
      const flow = await flows.consume<OAuthFlowPayload>(state, 'oauth');
      if (!flow) throw new AppError('OAUTH_STATE_INVALID');
      if (q.error) throw new AppError('OAUTH_PROVIDER_ERROR', { params: { detail: (q.error_description || q.error).slice(0, 200) } });
      if (!q.code) throw new AppError('OAUTH_INVALID_REQUEST', { params: { detail: 'code is required' } });

      let user;
      try {
        user = await exchangeCode(p, cfg.allowInsecureHttp, {
          code: q.code,
          state,
          iss: q.iss,
          redirectUri: flow.payload.redirect_uri,
          verifier: flow.payload.verifier,
          nonce: flow.payload.nonce,
        });
      } catch (e) {
        // Library and provider errors may quote the request; log only their kind and message.
        const err = e as { name?: string; code?: string; message?: string };
        ctx.log.warn({ provider: p.slug, err: { name: err.name, code: err.code, message: err.message?.slice(0, 200) } }, 'OAuth code exchange failed');
        throw new AppError('OAUTH_EXCHANGE_FAILED', { params: { provider: p.name } });
      }

      if (flow.intent === 'verify') return { kind: 'verify', data: await verified(p, user.id, flow.payload.verify, identity!) };
      if (flow.intent !== 'bind') return loginOrRegister(p, user.id, user.username, flow.payload.aff, client);

      const owner = await bindings.userById(flow.userId!);
      if (!owner) throw new AppError('OAUTH_USER_DELETED');
      await bindings.bind(Number(owner.id), p, user.id);
      const warning = await email.notify(owner.email, `${p.name} account bound`, lang);
      return { kind: 'bind', data: { action: 'bind', provider: p.slug, notification_warning: warning } };
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
