import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { codeAt, endRecentLogin, enrolTotp, passwordProof } from './twofactor-helpers.js';
import type { Browser } from '../helpers/http.js';

// The recent-login window ("sudo mode"): new-api's dashboard sets up two-factor and registers a passkey
// without a proof. Within SECURITY_RECENT_LOGIN_SECONDS of its sign-in a session may add a factor of a kind
// the user lacks; never remove one, replace a passkey or touch a binding; and the window ends.

const ORIGIN = 'http://localhost:5173';
const ENV = { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: ORIGIN };

eachDatabase('recent sign-in counts for adding a factor (A15, A14, A37)', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: ENV });
  });
  after(() => s.close());

  async function signedIn(name: string) {
    const uid = await s.createUser(name, `${name} password!`);
    const b = s.browser();
    const login = await b.login(name, `${name} password!`);
    assert.equal(login.json.success, true, login.text);
    return { uid, b };
  }

  test('the dashboard\'s two-factor setup: A15 without a proof, then A14 with the code alone', async () => {
    assert.equal(s.ctx.config.securityRecentLoginSeconds, 300, 'the documented default');
    const { b } = await signedIn('rl1');
    const setup = await b.post('/api/user/2fa/setup');
    assert.equal(setup.json.success, true, setup.text);
    const d = setup.json.data;
    // What the dashboard draws as the QR code: the otpauth URI, short enough for a QR code.
    assert.equal(d.qr_code_data, d.otpauth_uri);
    assert.match(d.qr_code_data, /^otpauth:\/\/totp\/.*secret=/);
    assert.ok(d.qr_code_data.length < 300);
    assert.match(d.qr_code_image, /^data:image\/png;base64,/);
    assert.equal(d.backup_codes.length, 4);
    // A second setup replaces the first: only the newest enrolment of the session counts.
    const again = (await b.post('/api/user/2fa/setup')).json.data;
    const old = await b.post('/api/user/2fa/enable', { code: codeAt(d.secret) });
    assert.equal(old.json.code, 'TWOFA_CODE_INVALID', 'the code of the replaced secret');
    assert.equal((await b.post('/api/user/2fa/enable', { code: codeAt(d.secret), flow_token: d.flow_token })).status, 409);
    const enable = await b.post('/api/user/2fa/enable', { code: codeAt(again.secret) });
    assert.equal(enable.json.success, true, enable.text);
    b.accessToken = enable.json.data.access_token;
    assert.equal((await b.get('/api/user/2fa/status')).json.data.enabled, true);
    // No enrolment left: the code alone finds nothing.
    assert.equal((await b.post('/api/user/2fa/enable', { code: codeAt(again.secret, 1) })).status, 409);
  });

  test('an enrolment is found only from the session that began it', async () => {
    const { b } = await signedIn('rl2');
    const other = s.browser();
    await other.login('rl2', 'rl2 password!');
    const d = (await b.post('/api/user/2fa/setup')).json.data;
    const foreign = await other.post('/api/user/2fa/enable', { code: codeAt(d.secret) });
    assert.equal(foreign.status, 409);
    assert.equal(foreign.json.code, 'TWOFA_SETUP_INVALID');
    // Five wrong codes end the enrolment, as with a flow token.
    for (let i = 0; i < 5; i++) assert.equal((await b.post('/api/user/2fa/enable', { code: '000000' })).json.code, 'TWOFA_CODE_INVALID');
    assert.equal((await b.post('/api/user/2fa/enable', { code: codeAt(d.secret) })).json.code, 'TWOFA_SETUP_INVALID');
  });

  test('the window ends: past it A15 and A37 ask for the proof again', async () => {
    const { uid, b } = await signedIn('rl3');
    // A refreshed session keeps its sign-in time.
    const refreshed = await b.post('/api/user/auth/refresh');
    assert.equal(refreshed.json.success, true, refreshed.text);
    b.accessToken = refreshed.json.data.access_token;
    await endRecentLogin(s, uid);
    for (const path of ['/api/user/2fa/setup', '/api/user/passkey/register/begin']) {
      const r = await b.post(path);
      assert.equal(r.status, 403, path);
      assert.equal(r.json.code, 'SECURITY_PROOF_REQUIRED');
    }
    // The proof still works as before.
    const proof = await passwordProof(b, 'rl3 password!', '2fa.setup');
    assert.equal((await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof })).json.success, true);
    // A new sign-in opens a new window.
    const fresh = s.browser();
    await fresh.login('rl3', 'rl3 password!');
    assert.equal((await fresh.post('/api/user/2fa/setup')).json.success, true);
  });

  test('a window of 0 turns it off; a proof that is sent is always checked', async () => {
    const off = await startAccount(v, { env: { ...ENV, SECURITY_RECENT_LOGIN_SECONDS: '0' } });
    try {
      await off.createUser('rl4', 'rl4 password!');
      const b = off.browser();
      await b.login('rl4', 'rl4 password!');
      assert.equal((await b.post('/api/user/2fa/setup')).json.code, 'SECURITY_PROOF_REQUIRED');
    } finally {
      await off.close();
    }
    const { b } = await signedIn('rl5');
    const bad = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': 'forged' });
    assert.equal(bad.status, 403);
    assert.equal(bad.json.code, 'SECURITY_PROOF_INVALID');
  });

  test('never for removing a factor, replacing a passkey or a binding', async () => {
    const uid = await s.createUser('rl6', 'rl6 password!');
    const { b } = await enrolTotp(s, 'rl6', 'rl6 password!');
    // Within the window (enrolTotp just signed in): a passkey is a kind the user lacks, so it may be added.
    const auth = new SoftAuthenticator(ORIGIN);
    const begin = await b.post('/api/user/passkey/register/begin');
    assert.equal(begin.json.success, true, begin.text);
    const finish = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: auth.create(begin.json.data.options.publicKey) });
    assert.equal(finish.json.success, true, finish.text);
    b.accessToken = finish.json.data.access_token;

    const removals: [string, string, string][] = [
      ['POST', '/api/user/2fa/disable', '2fa.disable'],
      ['POST', '/api/user/2fa/backup_codes', '2fa.backup_codes.regenerate'],
      ['DELETE', '/api/user/passkey', 'passkey.delete'],
      ['POST', '/api/user/passkey/register/begin', 'passkey.register'],
      ['POST', '/api/user/2fa/setup', ''],
    ];
    for (const [method, path, scope] of removals) {
      const r = await b.request(method, path, method === 'POST' ? { body: {} } : {});
      if (!scope) {
        assert.equal(r.json.code, 'TWOFA_ALREADY_ENABLED');
        continue;
      }
      assert.equal(r.status, 403, `${path}: ${r.text}`);
      assert.equal(r.json.code, 'SECURITY_PROOF_REQUIRED');
      assert.equal(r.json.data.scope, scope);
    }
    // Bindings: the proof check itself, for a session signed in a moment ago.
    const identity = { userId: uid, role: 1, sid: await sidOf(b), authVersion: await authVersionOf(uid), via: 'access_token' as const };
    for (const [scope, context] of [['AccountUnbind', { provider_id: '7' }], ['AccountBind', { provider: 'github' }]] as const) {
      await assert.rejects(s.services.verification.verifyProof(identity, scope, context, undefined), { code: 'SECURITY_PROOF_REQUIRED' });
    }
    assert.equal((await b.get('/api/user/passkey')).json.data.enabled, true);
    assert.equal((await b.get('/api/user/2fa/status')).json.data.enabled, true);
  });

  async function sidOf(b: Browser) {
    return b.cookies.get('new_api_refresh')!.split('.')[0]!;
  }
  async function authVersionOf(uid: number) {
    return Number((await s.ctx.database.db.selectFrom('users').select('auth_version').where('id', '=', uid).executeTakeFirstOrThrow()).auth_version);
  }
});
