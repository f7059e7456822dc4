import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { codeAt, endRecentLogin, enrolTotp } from './twofactor-helpers.js';

// new-api's dashboard calls two-factor setup, backup codes and passkey registration without a proof: past
// the recent-login window (test/account/recent-login.test.ts) the step-up stays (403
// SECURITY_PROOF_REQUIRED), and the refusal says how to get the proof (A48's answer).

eachDatabase('step-up refusals that say how to recover (A15, A12, A37)', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: 'http://localhost' } });
  });
  after(() => s.close());

  test('A15 without a proof: 403 with the scope and methods of A48; following them sets up two-factor', async () => {
    const uid = await s.createUser('su1', 'su1 password!');
    const b = s.browser();
    await b.login('su1', 'su1 password!');
    await endRecentLogin(s, uid);
    const refused = await b.post('/api/user/2fa/setup');
    assert.equal(refused.status, 403);
    assert.equal(refused.json.code, 'SECURITY_PROOF_REQUIRED');
    const methods = await b.get('/api/verify/methods?scope=2fa.setup');
    assert.deepEqual(refused.json.data, methods.json.data);
    assert.equal(refused.json.data.scope, '2fa.setup');
    assert.deepEqual(refused.json.data.methods, [{ method: 'password', available: true }]);

    // The sequence of docs/differences.md: A47 with an offered method, then the same call with the proof.
    const { method } = refused.json.data.methods.find((m: { available: boolean }) => m.available);
    const proof = await b.post('/api/verify', { method, scope: refused.json.data.scope, password: 'su1 password!' });
    assert.equal(proof.json.success, true, proof.text);
    const setup = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(setup.json.success, true, setup.text);
    const enable = await b.post('/api/user/2fa/enable', { code: codeAt(setup.json.data.secret), flow_token: setup.json.data.flow_token });
    assert.equal(enable.json.success, true, enable.text);

    // A spent proof is refused with the same recovery data.
    b.accessToken = enable.json.data.access_token;
    const spent = await b.post('/api/user/passkey/register/begin', {}, { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(spent.status, 403);
    assert.equal(spent.json.data.scope, 'passkey.register');
  });

  test('A12 of a TOTP user lists the 2fa method; A37 with no body at all is the step-up refusal, not a 400', async () => {
    const uid = await s.createUser('su2', 'su2 password!');
    const { b } = await enrolTotp(s, 'su2', 'su2 password!');
    await endRecentLogin(s, uid);
    const codes = await b.post('/api/user/2fa/backup_codes');
    assert.equal(codes.status, 403);
    assert.equal(codes.json.code, 'SECURITY_PROOF_REQUIRED');
    assert.equal(codes.json.data.scope, '2fa.backup_codes.regenerate');
    assert.deepEqual(codes.json.data.methods, [{ method: '2fa', available: true }]);

    for (const headers of [{}, { 'content-type': 'application/json' }] as Record<string, string>[]) {
      const begin = await b.request('POST', '/api/user/passkey/register/begin', { headers });
      assert.equal(begin.status, 403, begin.text);
      assert.equal(begin.json.code, 'SECURITY_PROOF_REQUIRED');
      assert.equal(begin.json.data.scope, 'passkey.register');
      assert.deepEqual(begin.json.data.methods, [{ method: '2fa', available: true }]);
    }
    // The passwordless login start the dashboard also posts without a body.
    const login = await s.browser().request('POST', '/api/user/passkey/login/begin');
    assert.equal(login.status, 200, login.text);
    assert.ok(login.json.data.flow_token);
  });
});
