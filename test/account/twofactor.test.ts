import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { ROLE } from '../../src/account/db.js';
import { codeAt, enrolTotp, passwordProof, resetReplayGuard } from './twofactor-helpers.js';

eachDatabase('two-factor (A12-A18)', (v) => {
  let s: AccountServer;
  before(async () => {
    // SPEC's step-up alone: no recent-login window (test/account/recent-login.test.ts covers it).
    s = await startAccount(v, { env: { SECURITY_RECENT_LOGIN_SECONDS: '0' } });
  });
  after(() => s.close());

  test('A15 needs a TwoFASetup proof; A14 enables, rotates authority and revokes other sessions', async () => {
    const uid = await s.createUser('tf1', 'tf1 password!');
    const other = s.browser();
    await other.login('tf1', 'tf1 password!');
    const b = s.browser();
    await b.login('tf1', 'tf1 password!');
    const none = await b.post('/api/user/2fa/setup', {});
    assert.equal(none.status, 403);
    assert.equal(none.json.code, 'SECURITY_PROOF_REQUIRED');
    const wrongScope = await passwordProof(b, 'tf1 password!', 'passkey.register');
    const ws = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': wrongScope });
    assert.equal(ws.status, 403);
    assert.equal(ws.json.code, 'SECURITY_PROOF_SCOPE_MISMATCH');
    const proof = await passwordProof(b, 'tf1 password!', '2fa.setup');
    const setup = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof });
    assert.equal(setup.json.success, true);
    const d = setup.json.data;
    assert.match(d.secret, /^[A-Z2-7]{32}$/);
    assert.match(d.qr_code_image, /^data:image\/png;base64,/);
    assert.match(d.otpauth_uri, /^otpauth:\/\/totp\//);
    // The reference's `qr_code_data` is the QR code's text, which new-api's dashboard draws.
    assert.equal(d.qr_code_data, d.otpauth_uri);
    assert.equal(d.backup_codes.length, 4);
    const reused = await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof });
    assert.equal(reused.json.code, 'SECURITY_PROOF_CONSUMED');

    const wrong = await b.post('/api/user/2fa/enable', { code: '000000', flow_token: d.flow_token });
    assert.equal(wrong.json.success, false);
    assert.equal(wrong.json.code, 'TWOFA_CODE_INVALID');
    const badFlow = await b.post('/api/user/2fa/enable', { code: codeAt(d.secret), flow_token: 'nope' });
    assert.equal(badFlow.status, 409);
    assert.equal(badFlow.json.code, 'TWOFA_SETUP_INVALID');
    // The enrolment flow is bound to the session that began it.
    const foreign = await other.post('/api/user/2fa/enable', { code: codeAt(d.secret), flow_token: d.flow_token });
    assert.equal(foreign.status, 409);

    const oldToken = b.accessToken;
    const en = await b.post('/api/user/2fa/enable', { code: codeAt(d.secret), flow_token: d.flow_token });
    assert.equal(en.json.success, true, en.text);
    assert.match(en.json.data.access_token, /^ey/);
    assert.equal(en.json.data.session.current, true);
    const stale = await b.get('/api/user/2fa/status', { authorization: `Bearer ${oldToken}` });
    assert.equal(stale.status, 401);
    b.accessToken = en.json.data.access_token;
    const st = await b.get('/api/user/2fa/status');
    assert.deepEqual(st.json.data, { enabled: true, locked: false, backup_codes_remaining: 4 });
    assert.equal((await other.get('/api/user/2fa/status')).status, 401);
    const again = await b.post('/api/user/2fa/enable', { code: codeAt(d.secret, 1), flow_token: d.flow_token });
    assert.equal(again.status, 409);

    // The secret is stored sealed and the backup codes hashed.
    const row = await s.ctx.database.db.selectFrom('two_factor').selectAll().where('user_id', '=', uid).executeTakeFirstOrThrow();
    assert.ok(!row.secret_sealed.includes(d.secret));
    const codes = await s.ctx.database.db.selectFrom('two_factor_backup_codes').select('code_hash').where('user_id', '=', uid).execute();
    for (const c of codes) for (const plain of d.backup_codes) assert.ok(!c.code_hash.includes(plain.replace('-', '')));
    const log = s.log.text();
    for (const secret of [d.secret, proof, d.flow_token, ...d.backup_codes]) assert.ok(!log.includes(secret), 'secret in log');
  });

  test('A17 without a factor; A13 disable and A12 regenerate need their proofs', async () => {
    const uid = await s.createUser('tf2', 'tf2 password!');
    const plain = s.browser();
    await plain.login('tf2', 'tf2 password!');
    assert.deepEqual((await plain.get('/api/user/2fa/status')).json.data, { enabled: false, locked: false });
    const notOn = await plain.post('/api/user/2fa/disable', {});
    assert.equal(notOn.json.code, 'TWOFA_NOT_ENABLED');

    const { b, secret, backupCodes } = await enrolTotp(s, 'tf2', 'tf2 password!');
    const noProof = await b.post('/api/user/2fa/backup_codes', {});
    assert.equal(noProof.json.code, 'SECURITY_PROOF_REQUIRED');
    // Once a factor exists, the password no longer counts for step-up.
    const pw = await b.post('/api/verify', { method: 'password', scope: '2fa.backup_codes.regenerate', password: 'tf2 password!' });
    assert.equal(pw.status, 403);
    assert.equal(pw.json.code, 'SECURITY_METHOD_UNAVAILABLE');
    // A backup code does not pass the regenerate scope.
    const bc = await b.post('/api/verify', { method: '2fa', scope: '2fa.backup_codes.regenerate', code: backupCodes[0] });
    assert.equal(bc.json.code, 'SECURITY_VERIFICATION_FAILED');
    const code = codeAt(secret); // computed once: a 30 s step boundary between two calls must not change it
    const p = await b.post('/api/verify', { method: '2fa', scope: '2fa.backup_codes.regenerate', code });
    assert.equal(p.json.success, true, p.text);
    assert.deepEqual(Object.keys(p.json.data).sort(), ['expires_at', 'method', 'proof_token', 'scope']);
    assert.equal(p.json.data.method, '2fa');
    const wrongAction = await b.post('/api/user/2fa/disable', {}, { 'x-security-proof': p.json.data.proof_token });
    assert.equal(wrongAction.json.code, 'SECURITY_PROOF_SCOPE_MISMATCH');
    const regen = await b.post('/api/user/2fa/backup_codes', {}, { 'x-security-proof': p.json.data.proof_token });
    assert.equal(regen.json.success, true, regen.text);
    assert.equal(regen.json.data.backup_codes.length, 4);
    assert.ok(!regen.json.data.backup_codes.includes(backupCodes[1]));
    b.accessToken = regen.json.data.access_token;

    // The same TOTP code is refused a second time (replay guard), a fresh step passes.
    const replay = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code });
    assert.equal(replay.json.code, 'SECURITY_VERIFICATION_FAILED');
    const dp = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: codeAt(secret, 1) });
    assert.equal(dp.json.success, true, dp.text);
    const dis = await b.post('/api/user/2fa/disable', {}, { 'x-security-proof': dp.json.data.proof_token });
    assert.equal(dis.json.success, true, dis.text);
    b.accessToken = dis.json.data.access_token;
    assert.deepEqual((await b.get('/api/user/2fa/status')).json.data, { enabled: false, locked: false });
    const left = await s.ctx.database.db.selectFrom('two_factor_backup_codes').select('code_hash').where('user_id', '=', uid).execute();
    assert.equal(left.length, 0);
  });

  test('five failures lock the factor for everyone, even a correct code', async () => {
    const uid = await s.createUser('tf3', 'tf3 password!');
    const { b, secret } = await enrolTotp(s, 'tf3', 'tf3 password!');
    for (let i = 0; i < 5; i++) {
      const r = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: '000000' });
      assert.equal(r.json.code, 'SECURITY_VERIFICATION_FAILED');
    }
    const locked = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: codeAt(secret) });
    assert.equal(locked.json.code, 'SECURITY_VERIFICATION_LOCKED');
    assert.deepEqual((await b.get('/api/user/2fa/status')).json.data, { enabled: true, locked: true, backup_codes_remaining: 4 });
    const methods = await b.get('/api/verify/methods?scope=2fa.disable');
    assert.deepEqual(methods.json.data.methods, [{ method: '2fa', available: false, reason: 'Two-factor authentication is temporarily locked.' }]);
    // The lock lives in the database: a second instance sees it too.
    const twin = await startAccount(v, { databaseUrl: (s.ctx.config.account.databaseUrl), dataDir: s.dataDir });
    try {
      const login = await twin.browser().login('tf3', 'tf3 password!');
      assert.equal(login.json.success, false);
      assert.equal(login.json.code, 'SECURITY_METHOD_UNAVAILABLE');
    } finally {
      await twin.close();
    }
    await s.ctx.database.db.updateTable('two_factor').set({ locked_until: 1 }).where('user_id', '=', uid).execute();
    const unlocked = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: codeAt(secret) });
    assert.equal(unlocked.json.success, true, unlocked.text);
    await resetReplayGuard(s, uid);
  });

  test('A16 stats and A18 admin disable (outranking, all sessions revoked)', async () => {
    const adminId = await s.createUser('tfadmin', 'admin password!', { role: ROLE.admin });
    await s.createUser('tfadmin2', 'admin password!', { role: ROLE.admin });
    const admin = s.browser();
    await admin.login('tfadmin', 'admin password!');
    const uid = await s.createUser('tf4', 'tf4 password!');
    const { b } = await enrolTotp(s, 'tf4', 'tf4 password!');
    const st = await admin.get('/api/user/2fa/stats');
    assert.equal(st.json.success, true);
    assert.ok(st.json.data.enabled_users >= 1);
    assert.ok(st.json.data.total_users >= st.json.data.enabled_users);
    assert.match(st.json.data.enabled_rate, /^\d+\.\d%$/);
    assert.equal((await b.get('/api/user/2fa/stats')).status, 403);

    const peer = await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'tfadmin2').executeTakeFirstOrThrow();
    const out = await admin.delete(`/api/user/${peer.id}/2fa`);
    assert.equal(out.json.code, 'USER_OUTRANKED');
    const self = await admin.delete(`/api/user/${adminId}/2fa`);
    assert.equal(self.json.code, 'USER_OUTRANKED');
    const missing = await admin.delete('/api/user/999999/2fa');
    assert.equal(missing.json.code, 'USER_NOT_FOUND');
    const r = await admin.delete(`/api/user/${uid}/2fa`);
    assert.equal(r.json.success, true, r.text);
    assert.equal((await b.get('/api/user/2fa/status')).status, 401);
    const again = await admin.delete(`/api/user/${uid}/2fa`);
    assert.equal(again.json.code, 'USER_TWOFA_NOT_ENABLED');
    const login = await s.browser().login('tf4', 'tf4 password!');
    assert.match(login.json.data.access_token, /^ey/);
  });
});
