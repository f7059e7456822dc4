import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { codeIn, startSmtp } from '../helpers/smtp.js';
import { authorize, startOidc } from '../helpers/oidc.js';
import { codeAt, enrolTotp } from './twofactor-helpers.js';
import type { Browser } from '../helpers/http.js';

eachDatabase('end to end: email sign-up → OIDC bind → OIDC login (→ second factor)', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let oidc: Awaited<ReturnType<typeof startOidc>>;
  before(async () => {
    smtp = await startSmtp();
    oidc = await startOidc();
    s = await startAccount(v, {
      env: {
        SMTP_URL: smtp.url,
        EMAIL_VERIFICATION_ENABLED: 'true',
        EMAIL_VERIFICATION_RATE_LIMIT: '1000',
        OAUTH_ALLOW_INSECURE_HTTP: 'true',
        OIDC_DISCOVERY_URL: `${oidc.issuer}/.well-known/openid-configuration`,
        OIDC_CLIENT_ID: 'e2eclient',
        OIDC_CLIENT_SECRET: 'e2e-oidc-secret',
        OIDC_NAME: 'Example SSO',
      },
    });
  });
  after(async () => {
    await s.close();
    await oidc.stop();
    await smtp.close();
  });

  async function oidcCallback(b: Browser, intent: 'login' | 'bind', headers?: Record<string, string>) {
    const st = await b.post('/api/oauth/state', { provider: 'oidc', intent }, headers);
    assert.equal(st.json.success, true, st.text);
    const back = await authorize(st.json.data.authorization_url);
    return b.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`);
  }

  test('a new user signs up with an emailed code, binds the OIDC identity, and logs in with it', async () => {
    const b = s.browser();
    assert.equal((await b.get('/api/verification?email=lena@example.com')).json.success, true);
    const code = codeIn((await smtp.waitFor('lena@example.com'))[0]);
    const reg = await b.post('/api/user/register', { username: 'lena', password: 'lena password 1', email: 'lena@example.com', verification_code: code });
    assert.equal(reg.json.success, true, reg.text);

    assert.equal((await b.login('lena', 'lena password 1')).json.success, true);
    const proof = await b.post('/api/verify', { method: 'password', scope: 'account.binding.bind', password: 'lena password 1', context: { provider: 'oidc' } });
    assert.equal(proof.json.success, true, proof.text);
    oidc.user.sub = 'sso-lena';
    oidc.user.preferred_username = 'lena-sso';
    const bound = await oidcCallback(b, 'bind', { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(bound.json.success, true, bound.text);
    assert.equal(bound.json.data.action, 'bind');
    assert.equal(bound.json.data.notification_warning, false);
    const notice = await smtp.waitFor('lena@example.com', 2);
    assert.match(notice[1].text, /Example SSO account bound/);
    assert.deepEqual(
      (await b.get('/api/user/oauth/bindings')).json.data.map((x: { provider_slug: string; provider_user_id: string }) => [x.provider_slug, x.provider_user_id]),
      [['oidc', 'sso-lena']],
    );

    const fresh = s.browser();
    const login = await oidcCallback(fresh, 'login');
    assert.equal(login.json.success, true, login.text);
    assert.equal(login.json.data.user.username, 'lena');
    assert.equal(login.json.data.session.login_method, 'oauth:oidc');
    fresh.accessToken = login.json.data.access_token;
    assert.equal((await fresh.get('/api/user/sessions')).json.success, true);
  });

  test('with TOTP enrolled, OIDC login takes the same second-factor branch as password login', async () => {
    const { secret } = await enrolTotp(s, 'lena', 'lena password 1');
    const b = s.browser();
    const r = await oidcCallback(b, 'login');
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.require_verification, true);
    assert.equal(r.json.data.access_token, undefined);
    assert.equal(r.json.data.require_2fa, true);
    // No session yet: only the pending-login cookie of new-api's dashboard (see dashboard-login.test.ts).
    assert.deepEqual(r.setCookies.map((c) => c.split('=')[0]), ['new_api_pending_login']);
    const done = await b.post('/api/user/login/verify', { flow_token: r.json.data.flow_token, code: codeAt(secret, 1), method: '2fa' });
    assert.equal(done.json.success, true, done.text);
    assert.equal(done.json.data.session.login_method, 'oauth:oidc');
  });
});
