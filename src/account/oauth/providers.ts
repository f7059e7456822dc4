import * as oauth from 'oauth4webapi';
import type { MailOAuthConfig, CustomProviderConfig } from '../../config/mail-oauth.js';
import type { BindingColumn } from '../bindings/store.js';

/** The identity a provider vouches for. */
export interface ProviderUser {
  id: string;
  username: string;
  email: string;
}

export interface Provider {
  slug: string;
  name: string;
  icon: string;
  /** users column of a built-in provider; null for operator-defined providers (user_oauth_bindings). */
  column: BindingColumn | null;
  enabled: boolean;
  scope: string;
  pkce: boolean;
  oidc: boolean;
  client: oauth.Client;
  clientAuth(): oauth.ClientAuth;
  server(): Promise<oauth.AuthorizationServer>;
  userInfo(as: oauth.AuthorizationServer, tokens: oauth.TokenEndpointResponse): Promise<ProviderUser>;
}

const TIMEOUT_MS = 10_000;

/** A provider or its endpoints answered something unusable (details go to the log, never to the client). */
export class ProviderError extends Error {}

function path(value: unknown, field: string): unknown {
  let cur = value;
  for (const k of field.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}

/** Builds the provider registry from configuration. Built-in providers always exist; unconfigured ones are disabled. */
export function createProviders(cfg: MailOAuthConfig['oauth']): Map<string, Provider> {
  const insecure = cfg.allowInsecureHttp;
  const requestOptions = () => ({ [oauth.allowInsecureRequests]: insecure, signal: AbortSignal.timeout(TIMEOUT_MS) });

  async function getJson(url: string, accessToken: string): Promise<unknown> {
    if (!insecure && !url.startsWith('https://')) throw new ProviderError(`refusing non-https user-info endpoint`);
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'new-api-account' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) throw new ProviderError(`user-info endpoint answered ${res.status}`);
    return res.json();
  }

  /** A plain OAuth 2.0 provider: the custom-provider shape, with the users column and the id field named. */
  function plain(
    input: Omit<CustomProviderConfig, 'icon' | 'userIdField'> & {
      icon?: string;
      column: BindingColumn | null;
      basicAuth?: boolean;
      idField: string;
    },
  ): Provider {
    const as: oauth.AuthorizationServer = {
      issuer: new URL(input.authorizationEndpoint).origin,
      authorization_endpoint: input.authorizationEndpoint,
      token_endpoint: input.tokenEndpoint,
    };
    return {
      slug: input.slug,
      name: input.name,
      icon: input.icon ?? '',
      column: input.column,
      enabled: Boolean(input.clientId && input.clientSecret),
      scope: input.scope,
      pkce: input.pkce,
      oidc: false,
      client: { client_id: input.clientId },
      clientAuth: () => (input.basicAuth ? oauth.ClientSecretBasic(input.clientSecret) : oauth.ClientSecretPost(input.clientSecret)),
      server: async () => as,
      async userInfo(_as, tokens) {
        const body = await getJson(input.userinfoEndpoint, tokens.access_token);
        const id = str(path(body, input.idField));
        if (!id) throw new ProviderError(`user info has no "${input.idField}"`);
        return { id, username: str(path(body, input.usernameField)), email: str(path(body, 'email')) };
      },
    };
  }

  const list: Provider[] = [
    plain({
      slug: 'github',
      name: 'GitHub',
      column: 'github_id',
      clientId: cfg.github.clientId,
      clientSecret: cfg.github.clientSecret,
      authorizationEndpoint: `${cfg.github.authBase}/login/oauth/authorize`,
      tokenEndpoint: `${cfg.github.authBase}/login/oauth/access_token`,
      userinfoEndpoint: `${cfg.github.apiBase}/user`,
      scope: 'read:user',
      pkce: true,
      idField: 'id',
      usernameField: 'login',
    }),
    plain({
      slug: 'discord',
      name: 'Discord',
      column: 'discord_id',
      clientId: cfg.discord.clientId,
      clientSecret: cfg.discord.clientSecret,
      authorizationEndpoint: `${cfg.discord.authBase}/oauth2/authorize`,
      tokenEndpoint: `${cfg.discord.apiBase}/oauth2/token`,
      userinfoEndpoint: `${cfg.discord.apiBase}/users/@me`,
      scope: 'identify',
      pkce: true,
      idField: 'id',
      usernameField: 'username',
    }),
    plain({
      slug: 'linuxdo',
      name: 'LinuxDO',
      column: 'linux_do_id',
      clientId: cfg.linuxdo.clientId,
      clientSecret: cfg.linuxdo.clientSecret,
      authorizationEndpoint: `${cfg.linuxdo.authBase}/oauth2/authorize`,
      tokenEndpoint: `${cfg.linuxdo.authBase}/oauth2/token`,
      userinfoEndpoint: `${cfg.linuxdo.apiBase}/api/user`,
      scope: '',
      pkce: false,
      basicAuth: true,
      idField: 'id',
      usernameField: 'username',
    }),
    oidcProvider(cfg.oidc, requestOptions),
    ...cfg.custom.map((c: CustomProviderConfig) =>
      plain({ ...c, column: null, idField: c.userIdField, usernameField: c.usernameField }),
    ),
  ];
  return new Map(list.map((p) => [p.slug, p]));
}

function oidcProvider(
  cfg: MailOAuthConfig['oauth']['oidc'],
  requestOptions: () => Record<string | symbol, unknown>,
): Provider {
  const issuer = cfg.discoveryUrl.replace(/\/\.well-known\/openid-configuration$/, '');
  let discovered: Promise<oauth.AuthorizationServer> | null = null;
  const client: oauth.Client = { client_id: cfg.clientId };
  return {
    slug: 'oidc',
    name: cfg.name,
    icon: '',
    column: 'oidc_id',
    enabled: Boolean(cfg.discoveryUrl && cfg.clientId && cfg.clientSecret),
    scope: 'openid profile email',
    pkce: true,
    oidc: true,
    client,
    clientAuth: () => oauth.ClientSecretBasic(cfg.clientSecret),
    server() {
      discovered ??= (async () => {
        const url = new URL(issuer);
        const res = await oauth.discoveryRequest(url, { algorithm: 'oidc', ...requestOptions() });
        return oauth.processDiscoveryResponse(url, res);
      })();
      discovered.catch(() => (discovered = null));
      return discovered;
    },
    async userInfo(as, tokens) {
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      if (!claims?.sub) throw new ProviderError('ID token has no subject');
      let extra: Record<string, unknown> = {};
      if (as.userinfo_endpoint) {
        const res = await oauth.userInfoRequest(as, client, tokens.access_token, requestOptions());
        extra = await oauth.processUserInfoResponse(as, client, claims.sub, res);
      }
      const pick = (k: string) => str(extra[k]) || str(claims[k]);
      return { id: claims.sub, username: pick('preferred_username') || pick('nickname'), email: pick('email') };
    },
  };
}

/** The provider's authorization URL for a flow. */
export async function authorizationUrl(p: Provider, input: { state: string; redirectUri: string; verifier: string; nonce: string }) {
  const as = await p.server();
  if (!as.authorization_endpoint) throw new ProviderError('provider has no authorization endpoint');
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set('client_id', p.client.client_id);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('response_type', 'code');
  if (p.scope) url.searchParams.set('scope', p.scope);
  url.searchParams.set('state', input.state);
  if (p.oidc) url.searchParams.set('nonce', input.nonce);
  if (p.pkce) {
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(input.verifier));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

/** Exchanges the authorization code (with the PKCE verifier) and reads the provider's user. */
export async function exchangeCode(
  p: Provider,
  insecure: boolean,
  input: { code: string; state: string; iss?: string; redirectUri: string; verifier: string; nonce: string },
): Promise<ProviderUser> {
  const as = await p.server();
  const params = new URLSearchParams({ code: input.code, state: input.state });
  if (input.iss) params.set('iss', input.iss);
  const callback = oauth.validateAuthResponse(as, p.client, params, input.state);
  const opts = { [oauth.allowInsecureRequests]: insecure, signal: AbortSignal.timeout(TIMEOUT_MS) };
  const res = await oauth.authorizationCodeGrantRequest(as, p.client, p.clientAuth(), callback, input.redirectUri, p.pkce ? input.verifier : oauth.nopkce, opts);
  const tokens = await oauth.processAuthorizationCodeResponse(as, p.client, res, p.oidc ? { expectedNonce: input.nonce, requireIdToken: true } : undefined);
  // oauth4webapi trusts the token endpoint's TLS and skips the ID token signature; we check it (ASVS 6.8.2).
  if (p.oidc) await oauth.validateApplicationLevelSignature(as, res, opts);
  return p.userInfo(as, tokens);
}
