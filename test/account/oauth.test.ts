import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { authorize, startFakeOAuth2, startOAuthAccount } from '../helpers/oidc.js';
import type { Browser } from '../helpers/http.js';

async function proof(b: Browser, password: string, scope: string, context: unknown) {
  const r = await b.post('/api/verify', { method: 'password', scope, password, context });
  assert.equal(r.json.success, true, r.text);
  return r.json.data.proof_token as string;
}

eachDatabase('A05 / A01 OAuth with a real OIDC provider and a GitHub-style fake', (v) => {
  let s: AccountServer;
  let oidc: Awaited<ReturnType<typeof startOAuthAccount>>['oidc'];
  let gh: Awaited<ReturnType<typeof startOAuthAccount>>['gh'];

  async function state(b: Browser, provider: string, intent = 'login', headers?: Record<string, string>, aff?: string) {
    const r = await b.post('/api/oauth/state', { provider, intent, ...(aff ? { aff } : {}) }, headers);
    assert.equal(r.json.success, true, r.text);
    return r.json.data as { flow_token: string; expires_at: number; authorization_url: string };
  }

  async function loginVia(b: Browser, provider: string) {
    const st = await state(b, provider);
    const back = await authorize(st.authorization_url);
    assert.equal(back.get('state'), st.flow_token);
    return b.get(`/api/oauth/${provider}?code=${back.get('code')}&state=${back.get('state')}`);
  }

  let close = async () => {};
  before(async () => {
    ({ s, oidc, gh, close } = await startOAuthAccount(v));
    await s.createUser('alice', 'alice password 1');
    await s.createUser('bob', 'bob password 12');
  });
  after(() => close());

  test('A05 gives a flow token that is the state of a PKCE authorization URL', async () => {
    const st = await state(s.browser(), 'oidc');
    const u = new URL(st.authorization_url);
    assert.equal(u.origin, new URL(oidc.issuer).origin);
    assert.equal(u.searchParams.get('state'), st.flow_token);
    assert.equal(u.searchParams.get('redirect_uri'), 'http://dash.example.test/oauth/oidc');
    assert.equal(u.searchParams.get('code_challenge_method'), 'S256');
    assert.match(u.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(st.expires_at > Date.now() / 1000 + 500);
  });

  test('OIDC login registers a new user, logs in again as the same user, and the state is single use', async () => {
    oidc.user.sub = 'oidc-sub-login';
    oidc.user.preferred_username = 'oidcfriend';
    const b = s.browser();
    const st = await state(b, 'oidc');
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text + s.log.lines.filter((l) => l.includes('exchange')).join('\n'));
    assert.equal(r.json.data.user.username, 'oidcfriend');
    assert.equal(r.json.data.session.login_method, 'oauth:oidc');
    assert.ok(r.setCookies.some((c) => c.startsWith('new_api_refresh=')));

    const replay = await b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(replay.status, 403);
    assert.equal(replay.json.code, 'OAUTH_STATE_INVALID');

    const again = await loginVia(s.browser(), 'oidc');
    assert.equal(again.json.data.user.id, r.json.data.user.id);
    for (const secret of ['oidc-secret-value', back.get('code')!, r.json.data.access_token]) {
      assert.ok(!s.log.text().includes(secret), 'no secret in the log');
    }
  });

  test('GitHub-style login through user-info, username taken falls back to github_<n>', async () => {
    gh.state.user = { id: 777, login: 'alice', email: 'x@example.com' };
    const r = await loginVia(s.browser(), 'github');
    assert.equal(r.json.success, true, r.text);
    assert.match(r.json.data.user.username, /^github_\d+$/);
    const again = await loginVia(s.browser(), 'github');
    assert.equal(again.json.data.user.id, r.json.data.user.id);
  });

  test('aff on a login flow makes the inviter of a user signed up through the provider', async () => {
    const alice = await s.ctx.database.db.selectFrom('users').select(['id', 'aff_code']).where('username', '=', 'alice').executeTakeFirstOrThrow();
    gh.state.user = { id: 4711, login: 'invitee' };
    const b = s.browser();
    const st = await state(b, 'github', 'login', undefined, alice.aff_code);
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/github?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.user.username, 'invitee');
    assert.equal(r.json.data.user.inviter_id, Number(alice.id));
  });

  test('state presented to another provider, unknown or forged state, and expired state are refused', async () => {
    const b = s.browser();
    const st = await state(b, 'oidc');
    const wrongProvider = await b.get(`/api/oauth/github?code=x&state=${st.flow_token}`);
    assert.equal(wrongProvider.status, 403);
    assert.equal(wrongProvider.json.code, 'OAUTH_STATE_INVALID');
    const forged = await b.get('/api/oauth/oidc?code=x&state=forged');
    assert.equal(forged.json.code, 'OAUTH_STATE_INVALID');
    const missing = await b.get('/api/oauth/oidc?code=x');
    assert.equal(missing.json.code, 'OAUTH_STATE_INVALID');

    const old = await state(b, 'oidc');
    await s.ctx.database.db.updateTable('auth_flows').set({ expires_at: 1 }).where('purpose', '=', 'oauth').execute();
    const back = await authorize(old.authorization_url);
    const expired = await b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${old.flow_token}`);
    assert.equal(expired.json.code, 'OAUTH_STATE_INVALID');
  });

  test('a flow of another purpose is not a state', async () => {
    const other = await s.services.flows.create({ purpose: 'login_verification', ttlSeconds: 60, provider: 'oidc' });
    const r = await s.browser().get(`/api/oauth/oidc?code=x&state=${other.token}`);
    assert.equal(r.json.code, 'OAUTH_STATE_INVALID');
  });

  test('provider error is passed through and consumes the flow', async () => {
    const b = s.browser();
    const st = await state(b, 'github');
    const r = await b.get(`/api/oauth/github?state=${st.flow_token}&error=access_denied&error_description=The+user+said+no`);
    assert.equal(r.json.success, false);
    assert.equal(r.json.code, 'OAUTH_PROVIDER_ERROR');
    assert.equal(r.json.message, 'The user said no');
    const again = await b.get(`/api/oauth/github?state=${st.flow_token}&code=x`);
    assert.equal(again.json.code, 'OAUTH_STATE_INVALID');
  });

  test('a bad code fails the exchange with a clear code and no secrets', async () => {
    const b = s.browser();
    const st = await state(b, 'github');
    const r = await b.get(`/api/oauth/github?state=${st.flow_token}&code=not-a-real-code`);
    assert.equal(r.status, 502);
    assert.equal(r.json.code, 'OAUTH_EXCHANGE_FAILED');
    assert.doesNotMatch(r.text, /gh-secret-value|stack/);
  });

  test('unknown and unconfigured providers', async () => {
    const b = s.browser();
    const unknown = await b.post('/api/oauth/state', { provider: 'myspace', intent: 'login' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.code, 'OAUTH_UNKNOWN_PROVIDER');
    const disabled = await b.post('/api/oauth/state', { provider: 'discord', intent: 'login' });
    assert.equal(disabled.json.code, 'OAUTH_PROVIDER_DISABLED');
    assert.match(disabled.json.message, /Discord login and registration has not been enabled/);
    const cb = await b.get('/api/oauth/discord?code=x&state=y');
    assert.equal(cb.json.code, 'OAUTH_PROVIDER_DISABLED');
    const badIntent = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'reauth' });
    assert.equal(badIntent.json.code, 'OAUTH_INVALID_REQUEST');
    const affBind = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'login', aff: 'x'.repeat(33) });
    assert.equal(affBind.json.code, 'OAUTH_INVALID_REQUEST');
    const noBody = await b.post('/api/oauth/state', {});
    assert.equal(noBody.status, 400);
  });

  test('bind: needs a session and a proof, binds once, refuses an identity bound elsewhere, and is tied to its session', async () => {
    const anon = await s.browser().post('/api/oauth/state', { provider: 'github', intent: 'bind' });
    assert.equal(anon.status, 401);
    assert.equal(anon.json.code, 'OAUTH_BIND_LOGIN_REQUIRED');

    const alice = s.browser();
    await alice.login('alice', 'alice password 1');
    const noProof = await alice.post('/api/oauth/state', { provider: 'github', intent: 'bind' });
    assert.equal(noProof.status, 403);
    assert.match(noProof.json.code, /^SECURITY_PROOF_/);

    gh.state.user = { id: 9001, login: 'alicegh' };
    const p = await proof(alice, 'alice password 1', 'account.binding.bind', { provider: 'github' });
    const st = await state(alice, 'github', 'bind', { 'x-security-proof': p });
    const back = await authorize(st.authorization_url);

    const bob = s.browser();
    await bob.login('bob', 'bob password 12');
    const stolen = await bob.get(`/api/oauth/github?code=${back.get('code')}&state=${st.flow_token}`);
    assert.equal(stolen.status, 403);
    assert.equal(stolen.json.code, 'OAUTH_FLOW_SESSION_MISMATCH');
    const noBearer = await s.browser().get(`/api/oauth/github?code=${back.get('code')}&state=${st.flow_token}`);
    assert.equal(noBearer.json.code, 'OAUTH_FLOW_SESSION_MISMATCH');

    const bound = await alice.get(`/api/oauth/github?code=${back.get('code')}&state=${st.flow_token}`);
    assert.equal(bound.json.success, true, bound.text);
    assert.equal(bound.json.message, 'Binding successful');
    assert.deepEqual(bound.json.data, { action: 'bind', provider: 'github', notification_warning: false });

    const viaGithub = await loginVia(s.browser(), 'github');
    assert.equal(viaGithub.json.data.user.username, 'alice');

    const p2 = await proof(bob, 'bob password 12', 'account.binding.bind', { provider: 'github' });
    const st2 = await state(bob, 'github', 'bind', { 'x-security-proof': p2 });
    const back2 = await authorize(st2.authorization_url);
    const taken = await bob.get(`/api/oauth/github?code=${back2.get('code')}&state=${st2.flow_token}`);
    assert.equal(taken.json.success, false);
    assert.equal(taken.json.code, 'ACCOUNT_ALREADY_BOUND');
    assert.match(taken.json.message, /This GitHub account has already been bound/);
  });

  test('login of a banned user and registration switched off', async () => {
    gh.state.user = { id: 31337, login: 'banme' };
    const first = await loginVia(s.browser(), 'github');
    assert.equal(first.json.success, true);
    await s.services.users.setSecurity(first.json.data.user.id, { status: 2 });
    const banned = await loginVia(s.browser(), 'github');
    assert.equal(banned.json.code, 'OAUTH_USER_BANNED');
  });
});

eachDatabase('A01 with registration disabled', (v) => {
  let s: AccountServer;
  let gh: Awaited<ReturnType<typeof startFakeOAuth2>>;
  before(async () => {
    gh = await startFakeOAuth2({ clientId: 'c', clientSecret: 's3cret' });
    s = await startAccount(v, {
      env: {
        OAUTH_ALLOW_INSECURE_HTTP: 'true',
        REGISTER_ENABLED: 'false',
        DISCORD_CLIENT_ID: 'c',
        DISCORD_CLIENT_SECRET: 's3cret',
        DISCORD_OAUTH_BASE_URL: gh.base,
        DISCORD_API_BASE_URL: gh.base,
        LINUXDO_CLIENT_ID: 'c',
        LINUXDO_CLIENT_SECRET: 's3cret',
        LINUXDO_BASE_URL: gh.base,
      },
    });
  });
  after(async () => {
    await s.close();
    await gh.close();
  });

  test('a new Discord identity is refused when registration is off', async () => {
    gh.state.user = { id: '123456789012345678', username: 'newcomer' };
    const b = s.browser();
    const st = (await b.post('/api/oauth/state', { provider: 'discord', intent: 'login' })).json.data;
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/discord?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.code, 'REGISTER_DISABLED');
    const count = await s.ctx.database.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
  });

  test('LinuxDO (client secret in Basic auth, no PKCE) logs in an existing binding', async () => {
    const id = await s.createUser('linus', 'linus password 1');
    await s.services.bindings.bind(id, s.services.bindings.kindOf('linuxdo')!, '8080');
    gh.state.user = { id: 8080, username: 'linus_do', trust_level: 2 };
    const b = s.browser();
    const st = (await b.post('/api/oauth/state', { provider: 'linuxdo', intent: 'login' })).json.data;
    assert.equal(new URL(st.authorization_url).searchParams.get('code_challenge'), null);
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/linuxdo?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.user.username, 'linus');
    assert.equal(r.json.data.session.login_method, 'oauth:linuxdo');
  });
});
