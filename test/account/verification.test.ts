import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { SignJWT, decodeJwt } from 'jose';
import { eachDatabase } from '../helpers/services.js';
import { SESSION_SECRET, startAccount, type AccountServer } from '../helpers/account.js';
import { deriveKey } from '../../src/kit/crypto/tokens.js';
import { requireSecurityProof } from '../../src/account/verification-seam.js';
import { passwordProof } from './twofactor-helpers.js';

eachDatabase('step-up verification (A47, A48, proofs)', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { SECURITY_RATE_LIMIT: '40' } });
    await s.createUser('sv', 'sv password!');
  });
  after(() => s.close());

  async function session() {
    const b = s.browser();
    await b.login('sv', 'sv password!');
    return { b, identity: await s.services.sessions.authenticate(b.accessToken!) };
  }

  test('A48 lists the password fallback for a user without a factor; scope names are checked', async () => {
    const { b } = await session();
    const r = await b.get('/api/verify/methods?scope=2fa.setup');
    assert.deepEqual(r.json.data, { scope: '2fa.setup', methods: [{ method: 'password', available: true }], oauth_providers: [], password_encryption_enabled: false });
    assert.equal((await b.get('/api/verify/methods?scope=PasskeyRegister')).json.data.scope, 'passkey.register');
    assert.deepEqual((await b.get('/api/verify/methods?scope=2fa.disable')).json.data.methods, []);
    for (const q of ['', '?scope=auth.login', '?scope=nope']) {
      const bad = await b.get(`/api/verify/methods${q}`);
      assert.equal(bad.status, 403);
      assert.equal(bad.json.code, 'SECURITY_PROOF_SCOPE_MISMATCH');
    }
  });

  test('A47 refuses flow-only methods, unknown methods, bad contexts and a wrong password', async () => {
    const { b } = await session();
    for (const method of ['passkey', 'oauth']) {
      const r = await b.post('/api/verify', { method, scope: 'passkey.register' });
      assert.equal(r.status, 400);
      assert.equal(r.json.code, 'SECURITY_VERIFICATION_FLOW_REQUIRED');
    }
    const unknown = await b.post('/api/verify', { method: 'sms', scope: 'passkey.register' });
    assert.equal(unknown.json.code, 'SECURITY_PROOF_METHOD_MISMATCH');
    for (const [scope, context] of [
      ['2fa.setup', { x: 1 }],
      ['2fa.setup', [1]],
      ['account.binding.unbind', {}],
      ['account.binding.unbind', { provider_id: '1', extra: 2 }],
      ['account.binding.bind', { provider: 'github', email: 'a@b.c' }],
    ] as const) {
      const r = await b.post('/api/verify', { method: 'password', scope, context, password: 'sv password!' });
      assert.equal(r.status, 400, JSON.stringify(context));
      assert.equal(r.json.code, 'SECURITY_CONTEXT_INVALID');
    }
    const wrong = await b.post('/api/verify', { method: 'password', scope: 'passkey.register', password: 'nope nope nope' });
    assert.equal(wrong.status, 200);
    assert.equal(wrong.json.code, 'SECURITY_VERIFICATION_FAILED');
    assert.ok(!s.log.text().includes('nope nope nope'));
  });

  test('a proof is bound to session, scope and context, and is consumed once', async () => {
    const { b, identity } = await session();
    const other = await session();
    const proof = await passwordProof(b, 'sv password!', 'account.binding.unbind', { provider_id: 7 });
    const claims = decodeJwt(proof);
    assert.equal(claims.scope, 'account.binding.unbind');
    const verify = s.services.verification.verifyProof.bind(s.services.verification);
    await assert.rejects(verify(identity, 'AccountUnbind', { provider_id: '8' }, proof), { code: 'SECURITY_PROOF_CONTEXT_MISMATCH' });
    await assert.rejects(verify(identity, 'AccountBind', { provider: 'github' }, proof), { code: 'SECURITY_PROOF_SCOPE_MISMATCH' });
    await assert.rejects(verify(other.identity, 'AccountUnbind', { provider_id: '7' }, proof), { code: 'SECURITY_PROOF_INVALID' });
    await assert.rejects(verify(identity, 'AccountUnbind', { provider_id: '7' }, proof.slice(0, -2) + 'AA'), { code: 'SECURITY_PROOF_INVALID' });
    await assert.rejects(verify(identity, 'AccountUnbind', { provider_id: '7' }, undefined), { code: 'SECURITY_PROOF_REQUIRED' });
    assert.deepEqual(await verify(identity, 'AccountUnbind', { provider_id: '7' }, proof), { method: 'password', scope: 'account.binding.unbind' });
    await assert.rejects(verify(identity, 'AccountUnbind', { provider_id: '7' }, proof), { code: 'SECURITY_PROOF_CONSUMED' });

    // The seam other modules call reads the X-Security-Proof header.
    const bind = await passwordProof(b, 'sv password!', 'account.binding.bind', { provider: 'GitHub' });
    const req = { headers: { 'x-security-proof': bind } } as any;
    assert.deepEqual(await requireSecurityProof(s.services.verification, req, identity, 'AccountBind', { provider: 'github' }), { method: 'password', scope: 'account.binding.bind' });
  });

  test('an expired proof answers SECURITY_PROOF_EXPIRED', async () => {
    const { b, identity } = await session();
    const proof = await passwordProof(b, 'sv password!', 'passkey.register');
    const claims = decodeJwt(proof);
    const key = crypto.createSecretKey(deriveKey(SESSION_SECRET, 'security-proof'));
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 5 }).setProtectedHeader({ alg: 'HS256' }).sign(key);
    await assert.rejects(s.services.verification.verifyProof(identity, 'PasskeyRegister', {}, expired), { code: 'SECURITY_PROOF_EXPIRED' });
    assert.equal((await s.services.verification.verifyProof(identity, 'PasskeyRegister', {}, proof)).scope, 'passkey.register');
  });

  test('a personal access token cannot obtain a proof', async () => {
    const uid = await s.createUser('svpat', 'svpat password!');
    const token = await s.services.users.createAccessToken(uid);
    const r = await s.browser().post('/api/verify', { method: 'password', scope: '2fa.setup', password: 'svpat password!' }, { authorization: `Bearer ${token}` });
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'AUTH_SESSION_REQUIRED');
  });
});

eachDatabase('step-up verification with encrypted passwords and the per-user bucket', (v) => {
  test('A47 accepts a client-encrypted password; the per-user bucket spans sessions', async () => {
    const s = await startAccount(v, { env: { PASSWORD_LOGIN_ENCRYPTION_ENABLED: 'true', SECURITY_RATE_LIMIT: '4' } });
    try {
      await s.createUser('enc', 'enc password!');
      await s.createUser('enc2', 'enc password!');
      const key = (await s.browser().get('/api/user/login/encryption-key')).json.data;
      const encrypt = (pw: string) =>
        crypto.publicEncrypt({ key: key.public_key, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(pw)).toString('base64');
      const b = s.browser();
      const login = await b.post('/api/user/login', { username: 'enc', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid });
      b.accessToken = login.json.data.access_token;
      const plain = await b.post('/api/verify', { method: 'password', scope: '2fa.setup', password: 'enc password!' });
      assert.equal(plain.json.code, 'LOGIN_INVALID_PARAMETERS');
      const r = await b.post('/api/verify', { method: 'password', scope: '2fa.setup', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid });
      assert.equal(r.json.success, true, r.text);
      // Reads of the factor state (A17, A34, A48) have their own budget: a profile page's many loads spend none of the step-up's.
      for (let i = 0; i < 10; i++) {
        assert.equal((await b.get('/api/verify/methods?scope=2fa.setup')).json.data.password_encryption_enabled, true);
        assert.equal((await b.get('/api/user/2fa/status')).status, 200);
        assert.equal((await b.get('/api/user/passkey')).status, 200);
      }
      // Third and fourth verifying calls of this user in the window pass, the fifth is limited, from any session.
      assert.equal((await b.post('/api/verify', { method: 'password', scope: '2fa.setup', password: 'x' })).json.code, 'LOGIN_INVALID_PARAMETERS');
      const c2 = s.browser();
      const l2 = await c2.post('/api/user/login', { username: 'enc', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid });
      c2.accessToken = l2.json.data.access_token;
      assert.equal((await c2.post('/api/user/2fa/backup_codes', { code: '123456' })).json.code, 'TWOFA_NOT_ENABLED');
      const limited = await c2.post('/api/verify', { method: 'password', scope: '2fa.setup', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid });
      assert.equal(limited.status, 429);
      assert.equal(limited.json.code, 'RATE_LIMITED');
      assert.equal((await c2.get('/api/user/2fa/status')).status, 200, 'reads still pass');
      const d = s.browser();
      const l3 = await d.post('/api/user/login', { username: 'enc2', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid });
      d.accessToken = l3.json.data.access_token;
      assert.equal((await d.post('/api/verify', { method: 'password', scope: '2fa.setup', password_encrypted: encrypt('enc password!'), encryption_key_id: key.kid })).status, 200);
    } finally {
      await s.close();
    }
  });
});
