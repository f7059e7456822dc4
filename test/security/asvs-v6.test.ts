// OWASP ASVS 5.0 V6 (passwords and general authentication) against a real account server; see docs/security.md.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startGateway } from '../helpers/gateway.js';
import { startSmtp, type ReceivedMail } from '../helpers/smtp.js';
import { codeAt, enrolTotp } from '../account/twofactor-helpers.js';

function resetTokenIn(mail: ReceivedMail): string {
  const m = /\/user\/reset\?email=[^&\s]+&token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error('no reset link in the mail');
  return m[1];
}

eachDatabase('ASVS V6 passwords and authentication', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let n = 0;
  before(async () => {
    smtp = await startSmtp();
    s = await startAccount(v, { env: { SMTP_URL: smtp.url, EMAIL_VERIFICATION_RATE_LIMIT: '1000', PASSWORD_CONTEXT_WORDS: 'Acme,Rocketship' } });
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  const name = () => `u${process.pid % 1000}x${++n}`;
  const register = (username: string, password: string) => s.browser().post('/api/user/register', { username, password });
  const accepted = async (password: string, username = name()) => (await register(username, password)).json.success === true;

  /** Asks for a reset mail and sets `password` with its token; returns the A42 reply. */
  async function resetTo(email: string, password: string) {
    const before = smtp.messages.filter((m) => m.to.includes(email)).length;
    assert.equal((await s.browser().get(`/api/reset_password?email=${email}`)).json.success, true);
    const mails = await smtp.waitFor(email, before + 1, 30_000);
    return s.browser().post('/api/user/reset', { email, token: resetTokenIn(mails.at(-1)!), password });
  }

  test('ASVS 6.2.1 passwords of 8+ characters accepted, shorter refused', async () => {
    assert.equal(await accepted('kq7#vzm'), false, '7 characters');
    assert.equal(await accepted('kq7#vzmp'), true, '8 characters');
    assert.equal(await accepted('ключ7пар'), true, '8 characters counted as characters, not bytes');
  });

  test('ASVS 6.2.2 a user changes the password through reset; the old one stops working', async () => {
    await s.createUser('changer', 'first secret words', { email: 'changer@example.com' });
    assert.equal((await resetTo('changer@example.com', 'second secret words')).json.success, true);
    assert.equal((await s.browser().login('changer', 'second secret words')).json.success, true);
    assert.equal((await s.browser().login('changer', 'first secret words')).json.success, false);
  });

  test('ASVS 6.2.4 common passwords refused at registration and reset', async () => {
    for (const common of ['password1', 'Iloveyou', '1q2w3e4r', 'qwertyuiop', 'michelle']) assert.equal(await accepted(common), false, common);
    await s.createUser('commoner', 'uncommon enough phrase', { email: 'commoner@example.com' });
    const r = await resetTo('commoner@example.com', 'sunshine');
    assert.equal(r.json.code, 'RESET_PASSWORD_INVALID');
  });

  test('ASVS 6.2.5 passwords of any composition accepted', async () => {
    for (const pw of ['onlylowercaseletters', '9081726354', 'ALL UPPER WITH SPACES', '🔑🚪🔑🚪🔑🚪🔑🚪', '   leading spaces']) {
      assert.equal(await accepted(pw), true, pw);
    }
  });

  test('ASVS 6.2.8 the password is verified exactly as received', async () => {
    const exact = ' Mixed Case pw with 72+ bytes: ' + 'x'.repeat(60) + 'END ';
    await s.createUser('exact', exact);
    assert.equal((await s.browser().login('exact', exact)).json.success, true);
    for (const changed of [exact.trim(), exact.toLowerCase(), exact.toUpperCase(), exact.slice(0, 72), exact.slice(0, -1)]) {
      assert.equal((await s.browser().login('exact', changed)).json.success, false, JSON.stringify(changed));
    }
  });

  test('ASVS 6.2.9 passwords of 64 and 128 characters accepted', async () => {
    const u64 = name();
    const pw64 = 'sixty-four characters '.repeat(3).slice(0, 64);
    assert.equal(await accepted(pw64, u64), true);
    assert.equal((await s.browser().login(u64, pw64)).json.success, true);
    assert.equal(await accepted('b'.repeat(127) + 'c'), true);
    assert.equal(await accepted('b'.repeat(129)), false, 'the limit is 128');
  });

  test('ASVS 6.2.10 an old password stays valid', async () => {
    const id = await s.createUser('veteran', 'set ten years ago');
    const tenYearsAgo = Math.floor(Date.now() / 1000) - 10 * 365 * 86400;
    await s.ctx.database.db.updateTable('users').set({ created_at: tenYearsAgo }).where('id', '=', id).execute();
    const r = await s.browser().login('veteran', 'set ten years ago');
    assert.equal(r.json.success, true);
    assert.ok(r.json.data.access_token, 'a session, not a demand to rotate the password');
  });

  test('ASVS 6.2.11 passwords made of context words are refused', async () => {
    for (const pw of ['NewApi-2024!', 'acme12345', 'Rocketship!!', 'administrator1']) assert.equal(await accepted(pw), false, pw);
    assert.equal(await accepted('Zelda2024!', 'zelda'), false, 'the username plus digits and symbols');
    assert.equal(await accepted('acme rocket garden'), true, 'a longer phrase that contains a context word is fine');
  });

  test('ASVS 6.3.2 no default accounts exist in the account service or the gateway', async () => {
    const defaults = ['root', 'admin', 'administrator', 'sa', 'system'];
    const found = await s.ctx.database.db.selectFrom('users').select('username').where('username', 'in', defaults).execute();
    assert.deepEqual(found, []);
    for (const username of defaults) {
      for (const password of ['123456', 'password', username]) {
        assert.equal((await s.browser().login(username, password)).json.code, 'LOGIN_FAILED');
      }
    }
    const gw = await startGateway(v);
    try {
      assert.deepEqual(await gw.services.staff.list(), []);
      assert.equal((await gw.anonymous().get('/api/channel/')).status, 401);
    } finally {
      await gw.close();
    }
  });

  test('ASVS 6.3.4 every first factor leads to the second-factor step', async () => {
    await s.createUser('twofactor', 'two factor password');
    await enrolTotp(s, 'twofactor', 'two factor password');
    const b = s.browser();
    const r = await b.login('twofactor', 'two factor password');
    assert.equal(r.json.data.require_verification, true);
    assert.equal(r.json.data.access_token, undefined);
    assert.ok(!b.cookies.has('new_api_refresh'), 'no session before the second factor');
    // The same branch for OIDC logins is checked in test/account/oauth-e2e.test.ts, for passkeys in passkey.test.ts.
  });

  test('ASVS 6.3.6 email is never offered as a login or step-up method', async () => {
    await s.createUser('mailer', 'mailer password 1', { email: 'mailer@example.com' });
    const { b } = await enrolTotp(s, 'mailer', 'mailer password 1');
    for (const scope of ['2fa.disable', 'passkey.register', 'account.binding.bind', 'account.binding.unbind']) {
      const r = await b.get(`/api/verify/methods?scope=${scope}`);
      assert.equal(r.json.success, true, r.text);
      assert.ok(r.json.data.methods.every((m: { method: string }) => m.method !== 'email'), `${scope}: ${r.text}`);
    }
    const login = await s.browser().login('mailer', 'mailer password 1');
    assert.deepEqual(login.json.data.methods.map((m: { method: string }) => m.method), ['2fa']);
  });

  test('ASVS 6.3.8 (login and reset part) answers do not tell whether an account exists', async () => {
    await s.createUser('existing', 'existing password', { email: 'existing@example.com' });
    const wrong = await s.browser().login('existing', 'not the password');
    const unknown = await s.browser().login('nobody-here', 'not the password');
    assert.equal(wrong.status, unknown.status);
    assert.deepEqual(wrong.json, unknown.json);
    const known = await s.browser().get('/api/reset_password?email=existing@example.com');
    const missing = await s.browser().get('/api/reset_password?email=missing@example.com');
    assert.equal(known.status, missing.status);
    assert.deepEqual(known.json, missing.json);
  });

  test('ASVS 6.4.2 no operation takes a password hint or secret question', async () => {
    const doc = await (await fetch(`${s.url}/api/openapi.json`)).json();
    const names = new Set<string>();
    JSON.stringify(doc, (key, value) => (names.add(key), value));
    assert.ok(names.has('password') && names.size > 50, 'the document lists the request fields');
    const offending = [...names].filter((k) => /hint|question|secret_answer|security_answer/i.test(k));
    assert.deepEqual(offending, []);
  });

  test('ASVS 6.3.7 the user is mailed after a password reset and second-factor changes', async () => {
    const address = 'notified@example.com';
    await s.createUser('notified', 'notified password!', { email: address });
    const notices = () => smtp.messages.filter((m) => m.to.includes(address) && m.subject === 'Account security change').map((m) => m.text);
    const { b, secret } = await enrolTotp(s, 'notified', 'notified password!');
    assert.equal(notices().filter((t) => t.includes('two-factor authentication enabled')).length, 1, 'sent before A40 answered');
    const proof = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: codeAt(secret, 1) });
    assert.equal((await b.post('/api/user/2fa/disable', {}, { 'x-security-proof': proof.json.data.proof_token })).json.success, true);
    assert.equal(notices().filter((t) => t.includes('two-factor authentication disabled')).length, 1);
    assert.equal((await resetTo(address, 'notified new password')).json.success, true);
    assert.equal(notices().filter((t) => t.includes('password reset')).length, 1);
    assert.ok(notices().every((t) => !t.includes('notified new password')), 'the notice carries no secret');
  });

  test('ASVS 6.4.3 a reset password still needs the second factor', async () => {
    await s.createUser('forgetful', 'forgotten password', { email: 'forgetful@example.com' });
    await enrolTotp(s, 'forgetful', 'forgotten password');
    assert.equal((await resetTo('forgetful@example.com', 'remembered at last')).json.success, true);
    const b = s.browser();
    const r = await b.login('forgetful', 'remembered at last');
    assert.equal(r.json.data.require_verification, true, r.text);
    assert.ok(!b.cookies.has('new_api_refresh'));
    const status = await s.services.twoFactor.state(Number((await s.services.users.byUsernameOrThrow('forgetful')).id));
    assert.equal(status.enabled, true, 'the reset left the factor in place');
  });
});

eachDatabase('ASVS V6 anti-automation', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { CRITICAL_RATE_LIMIT_ENABLED: 'true', CRITICAL_RATE_LIMIT: '3', CRITICAL_RATE_LIMIT_DURATION: '600' } });
    await s.createUser('target', 'the right password');
  });
  after(() => s.close());

  test('ASVS 6.3.1 the critical bucket stops password guessing per IP', async () => {
    for (const guess of ['guess one', 'guess two', 'guess three']) {
      assert.equal((await s.browser().login('target', guess)).json.code, 'LOGIN_FAILED');
    }
    const blocked = await s.browser().login('target', 'the right password');
    assert.equal(blocked.status, 429, 'even the right password waits: the bucket counts attempts, not failures');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    assert.equal(blocked.json.access_token, undefined);
  });
});
