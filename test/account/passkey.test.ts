import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { loadConfig } from '../../src/config/index.js';
import { ROLE } from '../../src/account/db.js';
import { passwordProof } from './twofactor-helpers.js';
import type { Browser } from '../helpers/http.js';

const ORIGIN = 'http://localhost:5173';
const PASSKEY_ENV = { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: ORIGIN };

test('passkey configuration is validated', () => {
  assert.throws(() => loadConfig({ PASSKEY_ENABLED: 'true' }), /PASSKEY_RP_ID is required/);
  assert.throws(() => loadConfig({ PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost' }), /PASSKEY_ORIGINS is required/);
  assert.throws(() => loadConfig({ PASSKEY_ORIGINS: 'localhost' }), /PASSKEY_ORIGINS/);
  assert.equal(loadConfig(PASSKEY_ENV).passkey.rpId, 'localhost');
});

eachDatabase('passkeys (A22, A28, A29, A33-A40)', (v) => {
  let s: AccountServer;
  before(async () => {
    // SPEC's step-up alone: no recent-login window (test/account/recent-login.test.ts covers it).
    s = await startAccount(v, { env: { ...PASSKEY_ENV, SECURITY_RECENT_LOGIN_SECONDS: '0' } });
  });
  after(() => s.close());

  async function loggedIn(username: string) {
    await s.createUser(username, `${username} password!`);
    const b = s.browser();
    await b.login(username, `${username} password!`);
    return b;
  }

  /** A37 (with a password proof) + A38 with the software authenticator. */
  async function register(b: Browser, username: string, auth = new SoftAuthenticator(ORIGIN)) {
    const proof = await passwordProof(b, `${username} password!`, 'passkey.register');
    const begin = await b.post('/api/user/passkey/register/begin', {}, { 'x-security-proof': proof });
    assert.equal(begin.json.success, true, begin.text);
    const finish = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: auth.create(begin.json.data.options) });
    assert.equal(finish.json.success, true, finish.text);
    b.accessToken = finish.json.data.access_token;
    return auth;
  }

  test('A37/A38 register with a proof; bad origin, RP id or missing user verification are refused', async () => {
    const b = await loggedIn('pk1');
    const other = s.browser();
    await other.login('pk1', 'pk1 password!');
    const noProof = await b.post('/api/user/passkey/register/begin', {});
    assert.equal(noProof.status, 403);
    assert.equal(noProof.json.code, 'SECURITY_PROOF_REQUIRED');
    const auth = new SoftAuthenticator(ORIGIN);
    for (const o of [{ origin: 'http://evil.example' }, { rpId: 'evil.example' }, { noUserVerification: true }]) {
      const proof = await passwordProof(b, 'pk1 password!', 'passkey.register');
      const begin = await b.post('/api/user/passkey/register/begin', {}, { 'x-security-proof': proof });
      assert.equal(begin.json.data.options.rp.id, 'localhost');
      assert.equal(begin.json.data.options.authenticatorSelection.userVerification, 'required');
      const r = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: auth.create(begin.json.data.options, o) });
      assert.equal(r.json.code, 'PASSKEY_VERIFICATION_FAILED', JSON.stringify(o));
    }
    assert.deepEqual((await b.get('/api/user/passkey')).json.data, { enabled: false });
    const proof = await passwordProof(b, 'pk1 password!', 'passkey.register');
    const begin = await b.post('/api/user/passkey/register/begin', { rp_id: 'localhost' }, { 'x-security-proof': proof });
    const cred = auth.create(begin.json.data.options);
    const finish = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: cred });
    assert.equal(finish.json.success, true, finish.text);
    assert.match(finish.json.data.access_token, /^ey/);
    b.accessToken = finish.json.data.access_token;
    const replay = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: cred });
    assert.equal(replay.json.code, 'AUTH_FLOW_INVALID');
    assert.deepEqual((await b.get('/api/user/passkey')).json.data, { enabled: true, last_used_at: null });
    assert.equal((await other.get('/api/user/passkey')).status, 401);
    const badRp = await b.post('/api/user/passkey/login/begin', { rp_id: 'evil.example' });
    assert.equal(badRp.json.code, 'PASSKEY_RP_ID_INVALID');
  });

  test('A35/A36 passwordless login; tampered, replayed, wrong-origin, wrong-RP and foreign assertions fail', async () => {
    const b = await loggedIn('pk2');
    const auth = await register(b, 'pk2');
    const c = await loggedIn('pk2b');
    const authB = await register(c, 'pk2b');

    const attempt = async (o: Parameters<SoftAuthenticator['get']>[1] = {}, mutate?: (cred: any) => void, a = auth) => {
      const begin = await s.browser().post('/api/user/passkey/login/begin', {});
      assert.equal(begin.json.success, true, begin.text);
      const cred = a.get(begin.json.data.options, { ...o, challenge: o.challenge });
      mutate?.(cred);
      return { begin, cred, res: await s.browser().post('/api/user/passkey/login/finish', { flow_token: begin.json.data.flow_token, credential: cred }) };
    };
    const good = await attempt();
    assert.deepEqual(good.begin.json.data.rp_ids, ['localhost']);
    assert.equal(good.begin.json.data.options.userVerification, 'required');
    assert.equal(good.res.json.success, true, good.res.text);
    assert.equal(good.res.json.data.session.login_method, 'passkey');
    assert.equal(good.res.json.data.user.username, 'pk2');
    assert.ok(good.res.setCookies.some((x) => x.startsWith('new_api_refresh=')));
    const again = await s.browser().post('/api/user/passkey/login/finish', { flow_token: good.begin.json.data.flow_token, credential: good.cred });
    assert.equal(again.json.code, 'AUTH_FLOW_INVALID');
    // The old challenge signed again, presented on a new flow.
    const replayed = await attempt({ challenge: good.begin.json.data.options.challenge });
    assert.equal(replayed.res.json.code, 'PASSKEY_VERIFICATION_FAILED');
    for (const o of [{ tamperSignature: true }, { origin: 'http://evil.example' }, { rpId: 'evil.example' }, { noUserVerification: true }]) {
      const r = await attempt(o);
      assert.equal(r.res.json.code, 'PASSKEY_VERIFICATION_FAILED', JSON.stringify(o));
    }
    // A credential presented with another user's handle.
    const foreign = await attempt({}, (cred) => (cred.response.userHandle = authB.credentials[0].userHandle));
    assert.equal(foreign.res.json.code, 'PASSKEY_VERIFICATION_FAILED');
    // A signature counter that does not move forward (cloned authenticator).
    const stored = await s.ctx.database.db.selectFrom('passkey_credentials').select('counter').where('credential_id', '=', good.cred.id).executeTakeFirstOrThrow();
    auth.credentials[0].counter = Number(stored.counter) - 1;
    const cloned = await attempt();
    assert.equal(cloned.res.json.code, 'PASSKEY_VERIFICATION_FAILED');
    const ok = await attempt();
    assert.equal(ok.res.json.success, true);
    assert.ok((await b.get('/api/user/passkey')).json.data.last_used_at > 0);
  });

  test('A28/A29 passkey as the second login step; another user\'s credential is refused', async () => {
    const b = await loggedIn('pk3');
    const auth = await register(b, 'pk3');
    const c = await loggedIn('pk3b');
    const authB = await register(c, 'pk3b');
    const login = await s.browser().login('pk3', 'pk3 password!');
    assert.equal(login.json.data.require_verification, true);
    assert.deepEqual(login.json.data.methods, [{ method: 'passkey', available: true }]);
    const flow = login.json.data.flow_token;
    const totp = await s.browser().post('/api/user/login/verify', { flow_token: flow, code: '123456' });
    assert.equal(totp.json.code, 'SECURITY_METHOD_UNAVAILABLE');

    const begin = await s.browser().post('/api/user/login/passkey/begin', { flow_token: flow });
    assert.equal(begin.json.success, true, begin.text);
    assert.equal(begin.json.data.options.allowCredentials.length, 1);
    const pf = begin.json.data.flow_token;
    const foreign = authB.get({ ...begin.json.data.options, allowCredentials: [] });
    const r1 = await s.browser().post('/api/user/login/passkey/finish', { flow_token: flow, passkey_flow_token: pf, credential: foreign });
    assert.equal(r1.json.code, 'PASSKEY_VERIFICATION_FAILED');
    const begin2 = await s.browser().post('/api/user/login/passkey/begin', { flow_token: flow });
    const unlinked = await s.browser().post('/api/user/login/passkey/finish', {
      flow_token: (await s.browser().login('pk3', 'pk3 password!')).json.data.flow_token,
      passkey_flow_token: begin2.json.data.flow_token,
      credential: auth.get(begin2.json.data.options),
    });
    assert.equal(unlinked.json.code, 'AUTH_FLOW_INVALID');
    const begin3 = await s.browser().post('/api/user/login/passkey/begin', { flow_token: flow });
    const done = await s.browser().post('/api/user/login/passkey/finish', {
      flow_token: flow,
      passkey_flow_token: begin3.json.data.flow_token,
      credential: auth.get(begin3.json.data.options),
    });
    assert.equal(done.json.success, true, done.text);
    assert.equal(done.json.data.session.login_method, 'password');
    assert.match(done.json.data.access_token, /^ey/);
    const reuse = await s.browser().post('/api/user/login/passkey/begin', { flow_token: flow });
    assert.equal(reuse.json.code, 'AUTH_FLOW_INVALID');
    const missing = await s.browser().post('/api/user/login/passkey/finish', { flow_token: flow });
    assert.equal(missing.json.code, 'LOGIN_INVALID_PARAMETERS');
  });

  test('A39/A40 step-up proof deletes the passkey (A33); A22 admin reset revokes the user\'s sessions', async () => {
    const b = await loggedIn('pk4');
    const none = await b.post('/api/user/passkey/verify/begin', { scope: 'passkey.delete' });
    assert.equal(none.json.code, 'SECURITY_METHOD_UNAVAILABLE');
    const auth = await register(b, 'pk4');
    const noProof = await b.delete('/api/user/passkey');
    assert.equal(noProof.json.code, 'SECURITY_PROOF_REQUIRED');
    const begin = await b.post('/api/user/passkey/verify/begin', { scope: 'passkey.delete' });
    assert.equal(begin.json.success, true, begin.text);
    const tampered = await b.post('/api/user/passkey/verify/finish', { flow_token: begin.json.data.flow_token, credential: auth.get(begin.json.data.options, { tamperSignature: true }) });
    assert.equal(tampered.json.code, 'PASSKEY_VERIFICATION_FAILED');
    const begin2 = await b.post('/api/user/passkey/verify/begin', { scope: 'PasskeyDelete' });
    const fin = await b.post('/api/user/passkey/verify/finish', { flow_token: begin2.json.data.flow_token, credential: auth.get(begin2.json.data.options) });
    assert.equal(fin.json.success, true, fin.text);
    assert.equal(fin.json.data.method, 'passkey');
    assert.equal(fin.json.data.scope, 'passkey.delete');
    const del = await b.delete('/api/user/passkey', { 'x-security-proof': fin.json.data.proof_token });
    assert.equal(del.json.success, true, del.text);
    b.accessToken = del.json.data.access_token;
    assert.deepEqual((await b.get('/api/user/passkey')).json.data, { enabled: false });

    await s.createUser('pkadmin', 'pkadmin password!', { role: ROLE.admin });
    const admin = s.browser();
    await admin.login('pkadmin', 'pkadmin password!');
    const uid = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'pk4').executeTakeFirstOrThrow()).id);
    const nothing = await admin.delete(`/api/user/${uid}/reset_passkey`);
    assert.equal(nothing.json.code, 'PASSKEY_NOT_REGISTERED');
    await register(b, 'pk4');
    const reset = await admin.delete(`/api/user/${uid}/reset_passkey`);
    assert.equal(reset.json.success, true, reset.text);
    assert.deepEqual(reset.json.data, { id: uid, username: 'pk4' });
    assert.equal((await b.get('/api/user/passkey')).status, 401);
    const log = s.log.text();
    assert.ok(!log.includes(fin.json.data.proof_token) && !log.includes(begin2.json.data.flow_token));
  });
});

eachDatabase('passkeys switched off', (v) => {
  test('ceremonies answer PASSKEY_DISABLED', async () => {
    const s = await startAccount(v);
    try {
      await s.createUser('off', 'off password!');
      const b = s.browser();
      await b.login('off', 'off password!');
      for (const path of ['/api/user/passkey/register/begin', '/api/user/passkey/login/begin']) {
        const r = await b.post(path, {});
        assert.equal(r.json.code, 'PASSKEY_DISABLED', path);
      }
    } finally {
      await s.close();
    }
  });
});
