import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { SoftAuthenticator } from '../helpers/webauthn.js';
import { codeAt, enrolTotp, resetReplayGuard } from './twofactor-helpers.js';

// new-api's dashboard turns two-factor off and renews backup codes with `{code}` in the body (no proof
// header), reads `data.options.publicKey` of the passkey ceremonies (go-webauthn's shape), and reads the
// factor state several times per profile page load.

const ORIGIN = 'http://localhost:5173';
const ENV = { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: ORIGIN };

eachDatabase('new-api dashboard: TOTP code as the proof, passkey options.publicKey, read budget', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: ENV });
  });
  after(() => s.close());

  test('A12 with the current TOTP code in the body: new backup codes; a backup code or a reused code is refused', async () => {
    const uid = await s.createUser('cp1', 'cp1 password!');
    const { b, secret, backupCodes } = await enrolTotp(s, 'cp1', 'cp1 password!');
    const byBackup = await b.post('/api/user/2fa/backup_codes', { code: backupCodes[0] });
    assert.equal(byBackup.json.code, 'SECURITY_VERIFICATION_FAILED', 'renewing needs the authenticator, not a code being replaced');
    await resetReplayGuard(s, uid);
    const code = codeAt(secret);
    const regen = await b.post('/api/user/2fa/backup_codes', { code });
    assert.equal(regen.json.success, true, regen.text);
    assert.equal(regen.json.data.backup_codes.length, 4);
    assert.match(regen.json.data.access_token, /^ey/);
    b.accessToken = regen.json.data.access_token;
    // The same step again: the replay guard refuses it.
    assert.equal((await b.post('/api/user/2fa/backup_codes', { code })).json.code, 'SECURITY_VERIFICATION_FAILED');
    // A proof header wins over the body: a bad one is refused whatever the code.
    const forged = await b.post('/api/user/2fa/backup_codes', { code: codeAt(secret, 1) }, { 'x-security-proof': 'forged' });
    assert.equal(forged.json.code, 'SECURITY_PROOF_INVALID');
    assert.equal(regen.json.data.backup_codes.includes(backupCodes[1]), false);
  });

  test('A13 with a wrong code is refused and counted: the fifth locks the factor, even for the right code', async () => {
    const uid = await s.createUser('cp2', 'cp2 password!');
    const { b, secret } = await enrolTotp(s, 'cp2', 'cp2 password!');
    for (let i = 0; i < 4; i++) {
      const wrong = await b.post('/api/user/2fa/disable', { code: '000000' });
      assert.equal(wrong.json.success, false);
      assert.equal(wrong.json.code, 'SECURITY_VERIFICATION_FAILED');
    }
    assert.equal((await b.post('/api/user/2fa/disable', { code: '111111' })).json.code, 'SECURITY_VERIFICATION_FAILED');
    const locked = await b.post('/api/user/2fa/disable', { code: codeAt(secret) });
    assert.equal(locked.json.code, 'SECURITY_VERIFICATION_LOCKED');
    assert.equal((await b.get('/api/user/2fa/status')).json.data.enabled, true, 'still on');
    await resetReplayGuard(s, uid);
    // Without a code and without a proof: the step-up refusal with its recovery data.
    const none = await b.post('/api/user/2fa/disable', {});
    assert.equal(none.status, 403);
    assert.equal(none.json.code, 'SECURITY_PROOF_REQUIRED');
    assert.equal(none.json.data.scope, '2fa.disable');
    const off = await b.post('/api/user/2fa/disable', { code: codeAt(secret) });
    assert.equal(off.json.success, true, off.text);
    b.accessToken = off.json.data.access_token;
    assert.deepEqual((await b.get('/api/user/2fa/status')).json.data, { enabled: false, locked: false });
  });

  test('A13 takes a backup code, as A47 does for this scope', async () => {
    await s.createUser('cp3', 'cp3 password!');
    const { b, backupCodes } = await enrolTotp(s, 'cp3', 'cp3 password!');
    const off = await b.post('/api/user/2fa/disable', { code: backupCodes[2] });
    assert.equal(off.json.success, true, off.text);
  });

  test('the per-user step-up budget limits code guesses across sessions; reads have their own', async () => {
    const limited = await startAccount(v, { env: { ...ENV, SECURITY_RATE_LIMIT: '8', SECURITY_READ_RATE_LIMIT: '12' } });
    try {
      await limited.createUser('cp4', 'cp4 password!');
      // enrolTotp spends three verifying calls (A47, A15, A14).
      const { b, secret } = await enrolTotp(limited, 'cp4', 'cp4 password!');
      // A second session (its second step is a login route: the critical bucket, not this one).
      const other = limited.browser();
      const challenge = await other.login('cp4', 'cp4 password!');
      const second = await other.post('/api/user/login/verify', { flow_token: challenge.json.data.flow_token, code: codeAt(secret) });
      assert.equal(second.json.success, true, second.text);
      other.accessToken = second.json.data.access_token;
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? other : b).post('/api/user/2fa/disable', { code: '000000' })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
      // The profile page's reads still answer, up to their own budget.
      const reads: number[] = [];
      for (let i = 0; i < 13; i++) reads.push((await b.get(i % 2 ? '/api/user/passkey' : '/api/user/2fa/status')).status);
      assert.deepEqual(reads, [...Array(12).fill(200), 429]);
    } finally {
      await limited.close();
    }
  });

  test('passkey ceremonies carry options.publicKey beside the bare options; the dashboard\'s shape registers and signs in', async () => {
    await s.createUser('cp5', 'cp5 password!');
    const b = s.browser();
    await b.login('cp5', 'cp5 password!');
    const auth = new SoftAuthenticator(ORIGIN);
    const begin = await b.post('/api/user/passkey/register/begin');
    assert.equal(begin.json.success, true, begin.text);
    const { publicKey, ...bare } = begin.json.data.options;
    assert.deepEqual(publicKey, bare);
    assert.equal(publicKey.rp.id, 'localhost');
    assert.equal(typeof publicKey.challenge, 'string');
    assert.equal(typeof publicKey.user.id, 'string');
    // What new-api's dashboard sends: its credential JSON built from options.publicKey.
    const finish = await b.post('/api/user/passkey/register/finish', { flow_token: begin.json.data.flow_token, credential: auth.create(publicKey) });
    assert.equal(finish.json.success, true, finish.text);
    b.accessToken = finish.json.data.access_token;

    const login = await s.browser().post('/api/user/passkey/login/begin');
    assert.deepEqual(login.json.data.options.publicKey.challenge, login.json.data.options.challenge);
    const signedIn = await s.browser().post('/api/user/passkey/login/finish', { flow_token: login.json.data.flow_token, credential: auth.get(login.json.data.options.publicKey) });
    assert.equal(signedIn.json.success, true, signedIn.text);

    const verify = await b.post('/api/user/passkey/verify/begin', { scope: 'passkey.delete' });
    const { publicKey: vk, ...vbare } = verify.json.data.options;
    assert.deepEqual(vk, vbare);
    const proof = await b.post('/api/user/passkey/verify/finish', { flow_token: verify.json.data.flow_token, credential: auth.get(vk) });
    assert.equal(proof.json.data.method, 'passkey');
    const removed = await b.delete('/api/user/passkey', { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(removed.json.success, true, removed.text);
  });
});
