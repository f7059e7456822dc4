import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import type { AccountServer } from '../helpers/account.js';
import { authorize, startOAuthAccount } from '../helpers/oidc.js';
import type { Browser } from '../helpers/http.js';
import { bindingDb } from '../../src/account/bindings/store.js';

eachDatabase('A05 / A01 verify intent and the oauth step-up method (A47, A48)', (v) => {
  let s: AccountServer;
  let oidc: Awaited<ReturnType<typeof startOAuthAccount>>['oidc'];
  let gh: Awaited<ReturnType<typeof startOAuthAccount>>['gh'];
  const secrets: string[] = [];

  /** Signs a new user up through OIDC login (no password) and returns a browser holding its session. */
  async function oauthOnlyUser(sub: string, username: string) {
    oidc.user.sub = sub;
    oidc.user.preferred_username = username;
    const b = s.browser();
    const st = (await b.post('/api/oauth/state', { provider: 'oidc', intent: 'login' })).json.data;
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.user.username, username);
    b.accessToken = r.json.data.access_token;
    return { b, id: r.json.data.user.id as number };
  }

  async function verifyState(b: Browser, provider: string, scope: string, context?: unknown) {
    const r = await b.post('/api/oauth/state', { provider, intent: 'verify', scope, ...(context === undefined ? {} : { context }) });
    assert.equal(r.json.success, true, r.text);
    return r.json.data as { flow_token: string; expires_at: number; authorization_url: string };
  }

  /** A05 verify through the OIDC provider as `sub`, then A01 called by `caller` (the starter by default). */
  async function viaOidc(b: Browser, sub: string, scope: string, context?: unknown, caller: Browser = b) {
    const st = await verifyState(b, 'oidc', scope, context);
    oidc.user.sub = sub;
    const back = await authorize(st.authorization_url);
    assert.equal(back.get('state'), st.flow_token);
    secrets.push(back.get('code')!, st.flow_token);
    const r = await caller.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`);
    if (r.json?.data?.proof_token) secrets.push(r.json.data.proof_token);
    return { r, st, back };
  }

  const proofCount = async () =>
    Number(
      (
        await s.ctx.database.db
          .selectFrom('auth_flows')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('purpose', '=', 'security_proof')
          .executeTakeFirstOrThrow()
      ).n,
    );

  let close = async () => {};
  before(async () => {
    ({ s, oidc, gh, close } = await startOAuthAccount(v, { OIDC_NAME: 'Example ID' }));
  });
  after(() => close());

  test('A48 offers oauth with the linked provider to an OAuth-only user; A47 oauth still needs the flow', async () => {
    const { b } = await oauthOnlyUser('sub-carol', 'carol');
    for (const scope of ['account.binding.bind', '2fa.setup', 'passkey.register', 'account.binding.unbind']) {
      const r = await b.get(`/api/verify/methods?scope=${scope}`);
      assert.equal(r.json.success, true, r.text);
      assert.deepEqual(r.json.data.methods, [{ method: 'oauth', available: true }], scope);
      assert.deepEqual(r.json.data.oauth_providers, [{ slug: 'oidc', name: 'Example ID' }]);
    }
    const disable = await b.get('/api/verify/methods?scope=2fa.disable');
    assert.deepEqual(disable.json.data.methods, []);

    const a47 = await b.post('/api/verify', { method: 'oauth', scope: '2fa.setup' });
    assert.equal(a47.status, 400);
    assert.equal(a47.json.code, 'SECURITY_VERIFICATION_FLOW_REQUIRED');
    const pw = await b.post('/api/verify', { method: 'password', scope: '2fa.setup', password: 'anything at all' });
    assert.equal(pw.json.code, 'SECURITY_METHOD_UNAVAILABLE');
  });

  test('verify flow → proof of method oauth, which binds a second provider and then unbinds it', async () => {
    const { b, id } = await oauthOnlyUser('sub-erin', 'erin');
    const { r } = await viaOidc(b, 'sub-erin', 'account.binding.bind', { provider: 'GitHub' });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual(Object.keys(r.json.data).sort(), ['expires_at', 'method', 'proof_token', 'scope']);
    assert.equal(r.json.data.method, 'oauth');
    assert.equal(r.json.data.scope, 'account.binding.bind');
    assert.ok(r.json.data.expires_at > Date.now() / 1000);

    gh.state.user = { id: 5150, login: 'erin-gh' };
    const st = await b.post('/api/oauth/state', { provider: 'github', intent: 'bind' }, { 'x-security-proof': r.json.data.proof_token });
    assert.equal(st.json.success, true, st.text);
    const back = await authorize(st.json.data.authorization_url);
    const bound = await b.get(`/api/oauth/github?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(bound.json.success, true, bound.text);
    assert.equal(bound.json.data.action, 'bind');
    const user = await bindingDb(s.ctx).selectFrom('users').select('github_id').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(user.github_id, '5150');

    const methods = await b.get('/api/verify/methods?scope=account.binding.unbind');
    assert.deepEqual(methods.json.data.oauth_providers, [
      { slug: 'github', name: 'GitHub' },
      { slug: 'oidc', name: 'Example ID' },
    ]);

    // The proof was consumed by the bind.
    const again = await b.post('/api/oauth/state', { provider: 'github', intent: 'bind' }, { 'x-security-proof': r.json.data.proof_token });
    assert.equal(again.json.code, 'SECURITY_PROOF_CONSUMED');

    const unbindProof = (await viaOidc(b, 'sub-erin', 'account.binding.unbind', { provider_id: 'github' })).r;
    assert.equal(unbindProof.json.success, true, unbindProof.text);
    const wrongTarget = await b.delete('/api/user/oauth/bindings/oidc', { 'x-security-proof': unbindProof.json.data.proof_token });
    assert.equal(wrongTarget.status, 403);
    assert.equal(wrongTarget.json.code, 'SECURITY_PROOF_CONTEXT_MISMATCH');
    const unbound = await b.delete('/api/user/oauth/bindings/github', { 'x-security-proof': unbindProof.json.data.proof_token });
    assert.equal(unbound.json.success, true, unbound.text);
  });

  test('a proof for one scope fails on another and works for its own (2FA setup)', async () => {
    const { b } = await oauthOnlyUser('sub-frank', 'frank');
    const { r } = await viaOidc(b, 'sub-frank', '2fa.setup');
    assert.equal(r.json.success, true, r.text);
    const proof = r.json.data.proof_token as string;

    const bind = await b.post('/api/oauth/state', { provider: 'github', intent: 'bind' }, { 'x-security-proof': proof });
    assert.equal(bind.status, 403);
    assert.equal(bind.json.code, 'SECURITY_PROOF_SCOPE_MISMATCH');
    const unbind = await b.delete('/api/user/oauth/bindings/oidc', { 'x-security-proof': proof });
    assert.equal(unbind.json.code, 'SECURITY_PROOF_SCOPE_MISMATCH');

    const setup = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof });
    assert.equal(setup.json.success, true, setup.text);
    assert.ok(setup.json.data.secret);
    const replay = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof });
    assert.equal(replay.json.code, 'SECURITY_PROOF_CONSUMED');
  });

  test('another provider identity is refused, nothing is issued, and the flow is spent', async () => {
    const { b } = await oauthOnlyUser('sub-gina', 'gina');
    await oauthOnlyUser('sub-hank', 'hank');
    const before = await proofCount();
    for (const sub of ['sub-stranger', 'sub-hank']) {
      const { r, st, back } = await viaOidc(b, sub, '2fa.setup');
      assert.equal(r.status, 403, r.text);
      assert.equal(r.json.code, 'OAUTH_VERIFY_IDENTITY_MISMATCH');
      assert.match(r.json.message, /Example ID account is not the one bound to your account/);
      assert.equal(r.json.data, undefined);
      const replay = await b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${st.flow_token}`);
      assert.equal(replay.json.code, 'OAUTH_STATE_INVALID');
    }
    assert.equal(await proofCount(), before);
  });

  test("another user's verify flow is refused; the owner completes it once", async () => {
    const ivy = await oauthOnlyUser('sub-ivy', 'ivy');
    const jack = await oauthOnlyUser('sub-jack', 'jack');
    const st = await verifyState(ivy.b, 'oidc', 'passkey.register');
    oidc.user.sub = 'sub-ivy';
    const back = await authorize(st.authorization_url);
    const url = `/api/oauth/oidc?code=${back.get('code')}&state=${st.flow_token}`;

    const stolen = await jack.b.get(url);
    assert.equal(stolen.status, 403);
    assert.equal(stolen.json.code, 'OAUTH_FLOW_SESSION_MISMATCH');
    const anonymous = await s.browser().get(url);
    assert.equal(anonymous.json.code, 'OAUTH_FLOW_SESSION_MISMATCH');

    const own = await ivy.b.get(url);
    assert.equal(own.json.success, true, own.text);
    assert.equal(own.json.data.scope, 'passkey.register');
    secrets.push(own.json.data.proof_token, back.get('code')!);
    const replay = await ivy.b.get(url);
    assert.equal(replay.status, 403);
    assert.equal(replay.json.code, 'OAUTH_STATE_INVALID');
  });

  test('A05 verify: session, scope and context are checked as for A47', async () => {
    const { b } = await oauthOnlyUser('sub-kate', 'kate');
    const anon = await s.browser().post('/api/oauth/state', { provider: 'oidc', intent: 'verify', scope: '2fa.setup' });
    assert.equal(anon.status, 401);
    assert.equal(anon.json.code, 'OAUTH_BIND_LOGIN_REQUIRED');

    const cases: [unknown, number, string][] = [
      [{ scope: 'no.such.scope' }, 403, 'SECURITY_PROOF_SCOPE_MISMATCH'],
      [{}, 403, 'SECURITY_PROOF_SCOPE_MISMATCH'],
      [{ scope: 'account.binding.bind', context: { provider: 'github', extra: 1 } }, 400, 'SECURITY_CONTEXT_INVALID'],
      [{ scope: 'account.binding.bind' }, 400, 'SECURITY_CONTEXT_INVALID'],
      [{ scope: '2fa.setup', context: { provider: 'x' } }, 400, 'SECURITY_CONTEXT_INVALID'],
      [{ scope: '2fa.setup', context: 'text' }, 400, 'SECURITY_CONTEXT_INVALID'],
      [{ scope: '2fa.disable' }, 403, 'SECURITY_METHOD_UNAVAILABLE'],
    ];
    for (const [extra, status, code] of cases) {
      const r = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'verify', ...(extra as object) });
      assert.equal(r.status, status, JSON.stringify(extra) + r.text);
      assert.equal(r.json.code, code, JSON.stringify(extra));
    }
    const notLinked = await b.post('/api/oauth/state', { provider: 'github', intent: 'verify', scope: '2fa.setup' });
    assert.equal(notLinked.json.code, 'SECURITY_METHOD_UNAVAILABLE');
    const scopeOnLogin = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'login', scope: '2fa.setup' });
    assert.equal(scopeOnLogin.status, 400);
    assert.equal(scopeOnLogin.json.code, 'OAUTH_INVALID_REQUEST');
    const badIntent = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'reauth' });
    assert.equal(badIntent.json.code, 'OAUTH_INVALID_REQUEST');
    const unknown = await b.post('/api/oauth/state', { provider: 'myspace', intent: 'verify', scope: '2fa.setup' });
    assert.equal(unknown.json.code, 'OAUTH_UNKNOWN_PROVIDER');
  });

  test('a user with a password gets the password fallback, not oauth', async () => {
    const id = await s.createUser('alice', 'alice password 1');
    await s.services.bindings.bind(id, s.services.bindings.kindOf('oidc')!, 'sub-alice');
    const b = s.browser();
    await b.login('alice', 'alice password 1');
    const m = await b.get('/api/verify/methods?scope=account.binding.bind');
    assert.deepEqual(m.json.data.methods, [{ method: 'password', available: true }]);
    assert.deepEqual(m.json.data.oauth_providers, [{ slug: 'oidc', name: 'Example ID' }]);
    const r = await b.post('/api/oauth/state', { provider: 'oidc', intent: 'verify', scope: '2fa.setup' });
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'SECURITY_METHOD_UNAVAILABLE');
  });

  test('an OAuth-only user whose provider is switched off is not offered oauth', async () => {
    const { b, id } = await oauthOnlyUser('sub-liam', 'liam');
    await bindingDb(s.ctx).updateTable('users').set({ oidc_id: null, github_id: 'gh-liam' }).where('id', '=', id).execute();
    // github is enabled in this server; discord (not configured) would be filtered out.
    await bindingDb(s.ctx).updateTable('users').set({ discord_id: 'dc-liam' }).where('id', '=', id).execute();
    const m = await b.get('/api/verify/methods?scope=2fa.setup');
    assert.deepEqual(m.json.data.oauth_providers, [{ slug: 'github', name: 'GitHub' }]);
    await bindingDb(s.ctx).updateTable('users').set({ github_id: null }).where('id', '=', id).execute();
    const none = await b.get('/api/verify/methods?scope=2fa.setup');
    assert.deepEqual(none.json.data.oauth_providers, []);
    assert.deepEqual(none.json.data.methods, [{ method: 'oauth', available: false, reason: 'No OAuth provider is linked to this account.' }]);
  });

  test('no code, flow token or proof in the log', () => {
    const text = s.log.text();
    assert.ok(secrets.length > 5);
    for (const secret of [...secrets, 'oidc-secret-value', 'gh-secret-value']) assert.ok(!text.includes(secret), 'secret in the log');
  });
});
