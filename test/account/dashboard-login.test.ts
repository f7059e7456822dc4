import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { nowSeconds } from '../../src/account/db.js';
import { codeAt, enrolTotp, resetReplayGuard } from './twofactor-helpers.js';

// new-api's dashboard signs a user with two-factor in with Gen A's protocol: A25 answers `require_2fa: true`
// and the code alone goes to POST /api/user/login/2fa (A26), the pending login held by a cookie.

const userIdOf = async (s: AccountServer, username: string) =>
  Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow()).id);

/** Password login of a TOTP user in a fresh browser: the challenge and its Set-Cookie lines. */
async function firstStep(s: AccountServer, username: string, password: string) {
  const b = s.browser();
  const r = await b.post('/api/user/login', { username, password });
  assert.equal(r.json.success, true, r.text);
  return { b, r };
}

eachDatabase('login with a second factor from new-api\'s dashboard (A25 require_2fa, A26 {code})', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
  });
  after(() => s.close());

  test('A25 answers require_2fa beside the Gen B challenge and sets the pending-login cookie, nothing else', async () => {
    await s.createUser('dl1', 'dl1 password!');
    await enrolTotp(s, 'dl1', 'dl1 password!');
    const { r } = await firstStep(s, 'dl1', 'dl1 password!');
    const d = r.json.data;
    assert.equal(d.require_2fa, true);
    assert.equal(d.require_verification, true);
    assert.deepEqual(d.methods, [{ method: '2fa', available: true }]);
    assert.equal(d.access_token, undefined);
    assert.equal(r.setCookies.length, 1);
    const cookie = r.setCookies[0];
    assert.ok(cookie.startsWith(`new_api_pending_login=${d.flow_token};`), cookie);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.match(cookie, /Path=\/api\/user\/login(;|$)/);
    const maxAge = Number(/Max-Age=(\d+)/.exec(cookie)?.[1]);
    assert.ok(maxAge > 250 && maxAge <= d.expires_at - nowSeconds() + 1, cookie);
  });

  test('A26 with {code} only completes the login from the cookie, exactly like A30, once', async () => {
    await s.createUser('dl2', 'dl2 password!');
    const { secret } = await enrolTotp(s, 'dl2', 'dl2 password!');
    const { b, r } = await firstStep(s, 'dl2', 'dl2 password!');
    const pending = b.cookies.get('new_api_pending_login');
    assert.equal(pending, r.json.data.flow_token);
    const code = codeAt(secret);
    const ok = await b.post('/api/user/login/2fa', { code });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.success, true, ok.text);
    assert.match(ok.json.data.access_token, /^ey/);
    assert.equal(ok.json.data.user.username, 'dl2');
    assert.equal(ok.json.data.session.login_method, 'password');
    assert.ok(ok.setCookies.some((c) => c.startsWith('new_api_refresh=')));
    assert.ok(!b.cookies.has('new_api_pending_login'), 'the pending-login cookie is cleared');
    b.accessToken = ok.json.data.access_token;
    assert.equal((await b.get('/api/user/sessions')).json.data.length, 2);
    // The same cookie again: the flow was consumed.
    const again = await s.browser().post('/api/user/login/2fa', { code: codeAt(secret, 1) }, { cookie: `new_api_pending_login=${pending}` });
    assert.equal(again.json.code, 'AUTH_FLOW_INVALID');
    assert.ok(again.setCookies.some((c) => c.startsWith('new_api_pending_login=;')), 'a dead cookie is cleared');
  });

  test('a backup code typed without its dash, as the dashboard sends it, is accepted once', async () => {
    await s.createUser('dl3', 'dl3 password!');
    const { backupCodes } = await enrolTotp(s, 'dl3', 'dl3 password!');
    const { b } = await firstStep(s, 'dl3', 'dl3 password!');
    const r = await b.post('/api/user/login/2fa', { code: backupCodes[0].replace('-', '') });
    assert.equal(r.json.success, true, r.text);
    const second = await firstStep(s, 'dl3', 'dl3 password!');
    const used = await second.b.post('/api/user/login/2fa', { code: backupCodes[0] });
    assert.equal(used.json.code, 'SECURITY_VERIFICATION_FAILED');
  });

  test('without the cookie, from another origin, or with wrong codes the login does not complete; five failures lock', async () => {
    await s.createUser('dl4', 'dl4 password!');
    const { secret } = await enrolTotp(s, 'dl4', 'dl4 password!');
    const none = await s.browser().post('/api/user/login/2fa', { code: '123456' });
    assert.equal(none.status, 200);
    assert.equal(none.json.code, 'AUTH_FLOW_INVALID');
    const { b } = await firstStep(s, 'dl4', 'dl4 password!');
    const foreign = await b.post('/api/user/login/2fa', { code: codeAt(secret) }, { origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.json.code, 'AUTH_ORIGIN_FORBIDDEN');
    for (let i = 0; i < 5; i++) {
      const wrong = await b.post('/api/user/login/2fa', { code: '000000' });
      assert.equal(wrong.json.code, 'SECURITY_VERIFICATION_FAILED');
      assert.ok(!wrong.setCookies.some((c) => c.startsWith('new_api_refresh=')));
    }
    const locked = await b.post('/api/user/login/2fa', { code: codeAt(secret) });
    assert.equal(locked.json.code, 'SECURITY_VERIFICATION_LOCKED');
    await resetReplayGuard(s, await userIdOf(s, 'dl4'));
    const fine = await b.post('/api/user/login/2fa', { code: codeAt(secret) });
    assert.equal(fine.json.success, true, fine.text);
  });

  test('a flow_token in the body still wins over the cookie (Gen B clients of A26)', async () => {
    await s.createUser('dl5', 'dl5 password!');
    const { secret } = await enrolTotp(s, 'dl5', 'dl5 password!');
    const one = await firstStep(s, 'dl5', 'dl5 password!');
    const two = await firstStep(s, 'dl5', 'dl5 password!');
    const r = await one.b.post('/api/user/login/2fa', { flow_token: two.r.json.data.flow_token, code: codeAt(secret) });
    assert.equal(r.json.success, true, r.text);
    const spent = await two.b.post('/api/user/login/2fa', { code: codeAt(secret, 1) });
    assert.equal(spent.json.code, 'AUTH_FLOW_INVALID');
  });
});

eachDatabase('A26 {code} under the limits of A30', (v) => {
  test('the critical rate limit and the active-session cap apply to the cookie path too', async () => {
    const limited = await startAccount(v, { env: { CRITICAL_RATE_LIMIT_ENABLED: 'true', CRITICAL_RATE_LIMIT: '4' } });
    const capped = await startAccount(v, { env: { USER_SESSION_ACTIVE_LIMIT: '1' } });
    try {
      await limited.createUser('rl', 'rl password!!');
      const { secret } = await enrolTotp(limited, 'rl', 'rl password!!'); // one critical request (login)
      const { b } = await firstStep(limited, 'rl', 'rl password!!'); // two
      assert.equal((await b.post('/api/user/login/2fa', { code: '000000' })).json.code, 'SECURITY_VERIFICATION_FAILED'); // three
      assert.equal((await b.post('/api/user/login/2fa', { code: '000000' })).json.code, 'SECURITY_VERIFICATION_FAILED'); // four
      const over = await b.post('/api/user/login/2fa', { code: codeAt(secret) });
      assert.equal(over.status, 429);
      assert.equal(over.json.code, 'RATE_LIMITED');

      await capped.createUser('cap', 'cap password!');
      const enrolled = await enrolTotp(capped, 'cap', 'cap password!'); // holds the one active session
      const second = await firstStep(capped, 'cap', 'cap password!');
      const refused = await second.b.post('/api/user/login/2fa', { code: codeAt(enrolled.secret) });
      assert.equal(refused.status, 409);
      assert.equal(refused.json.code, 'AUTH_SESSION_LIMIT');
    } finally {
      await limited.close();
      await capped.close();
    }
  });
});
