import http from 'node:http';
import crypto from 'node:crypto';
import { OAuth2Server } from 'oauth2-mock-server';
import { startAccount } from './account.js';
import type { Variant } from './services.js';

/**
 * A real OpenID Connect provider on loopback (oauth2-mock-server: discovery, JWKS, authorize, token,
 * userinfo). `user` decides who the next login is.
 */
export async function startOidc() {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  const user = { sub: 'oidc-user-1', preferred_username: 'oidcuser', email: 'oidc@example.com' };
  const challenges: string[] = [];
  server.service.on('beforeAuthorizeRedirect', (_redirect: unknown, req: http.IncomingMessage) => {
    const u = new URL(req.url ?? '/', 'http://x');
    challenges.push(u.searchParams.get('code_challenge') ?? '');
  });
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    token.payload.sub = user.sub;
  });
  server.service.on('beforeUserinfo', (res: { body: Record<string, unknown> }) => {
    res.body = { ...user };
  });
  await server.start(0, '127.0.0.1');
  return {
    issuer: server.issuer.url!,
    user,
    challenges,
    /** The mock's event emitter, for tests that alter what the provider answers. */
    service: server.service,
    stop: () => server.stop(),
  };
}

/** Follows an authorization URL one hop and returns the code and state the provider redirected with. */
export async function authorize(authorizationUrl: string): Promise<URLSearchParams> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (!location) throw new Error(`provider did not redirect (${res.status}): ${await res.text()}`);
  return new URL(location).searchParams;
}

/**
 * A loopback fake of a GitHub-style OAuth 2.0 provider: /login/oauth/authorize redirects with a code,
 * /login/oauth/access_token swaps it once (checking client secret, redirect URI and PKCE), /user and
 * /users/@me and /api/user return the current user.
 */
export async function startFakeOAuth2(opts: { clientId: string; clientSecret: string }) {
  const codes = new Map<string, { redirectUri: string; challenge: string | null }>();
  const tokens = new Set<string>();
  const state = { user: { id: 4242, login: 'octo', username: 'octo', email: 'octo@example.com' } as Record<string, unknown>, tokenRequests: 0 };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname.endsWith('/authorize')) {
      const code = crypto.randomBytes(8).toString('hex');
      codes.set(code, { redirectUri: url.searchParams.get('redirect_uri')!, challenge: url.searchParams.get('code_challenge') });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    if (url.pathname.endsWith('/access_token') || url.pathname.endsWith('/oauth2/token')) {
      state.tokenRequests++;
      let body = '';
      for await (const c of req) body += c;
      const p = new URLSearchParams(body);
      const basic = req.headers.authorization?.startsWith('Basic ')
        ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent)
        : null;
      const [id, secret] = basic ?? [p.get('client_id'), p.get('client_secret')];
      if (id !== opts.clientId || secret !== opts.clientSecret) return json(401, { error: 'invalid_client' });
      const saved = codes.get(p.get('code') ?? '');
      codes.delete(p.get('code') ?? '');
      if (!saved || saved.redirectUri !== p.get('redirect_uri')) return json(400, { error: 'invalid_grant' });
      if (saved.challenge) {
        const v = p.get('code_verifier') ?? '';
        if (crypto.createHash('sha256').update(v).digest('base64url') !== saved.challenge) return json(400, { error: 'invalid_grant', error_description: 'PKCE' });
      }
      const token = crypto.randomBytes(16).toString('hex');
      tokens.add(token);
      return json(200, { access_token: token, token_type: 'bearer', scope: 'read:user' });
    }
    if (['/user', '/users/@me', '/api/user'].includes(url.pathname)) {
      const t = req.headers.authorization?.replace(/^Bearer /i, '') ?? '';
      if (!tokens.has(t)) return json(401, { message: 'Bad credentials' });
      return json(200, state.user);
    }
    json(404, { message: 'Not Found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, state, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * An account server whose OIDC provider is a real one on loopback (startOidc) and whose GitHub is the
 * OAuth2 fake (client `gh-client` / `gh-secret-value`; OIDC client `oidcclient` / `oidc-secret-value`).
 * `env` adds or overrides settings. close() stops all three.
 */
export async function startOAuthAccount(variant: Variant, env: Record<string, string> = {}) {
  const oidc = await startOidc();
  const gh = await startFakeOAuth2({ clientId: 'gh-client', clientSecret: 'gh-secret-value' });
  const stopPeers = async () => {
    await oidc.stop();
    await gh.close();
  };
  const s = await startAccount(variant, {
    env: {
      OAUTH_ALLOW_INSECURE_HTTP: 'true',
      OIDC_DISCOVERY_URL: oidc.issuer,
      OIDC_CLIENT_ID: 'oidcclient',
      OIDC_CLIENT_SECRET: 'oidc-secret-value',
      GITHUB_CLIENT_ID: 'gh-client',
      GITHUB_CLIENT_SECRET: 'gh-secret-value',
      GITHUB_OAUTH_BASE_URL: gh.base,
      GITHUB_API_BASE_URL: gh.base,
      SERVER_ADDRESS: 'http://dash.example.test',
      ...env,
    },
  }).catch(async (e) => {
    await stopPeers();
    throw e;
  });
  return {
    s,
    oidc,
    gh,
    close: async () => {
      await s.close();
      await stopPeers();
    },
  };
}
