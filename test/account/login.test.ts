import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';

eachDatabase('A25 password login', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
    await s.createUser('alice', 'correct horse battery', { email: 'alice@example.com' });
  });
  after(() => s.close());

  test('plain login returns the session bundle and sets both cookies', async () => {
    const b = s.browser();
    const r = await b.login('alice', 'correct horse battery');
    assert.equal(r.status, 200);
    assert.equal(r.json.success, true);
    const d = r.json.data;
    assert.equal(d.token_type, 'Bearer');
    assert.match(d.access_token, /^ey/);
    assert.ok(d.access_expires_at > Date.now() / 1000);
    assert.equal(d.session.current, true);
    assert.equal(d.session.login_method, 'password');
    assert.equal(d.user.username, 'alice');
    assert.equal(d.user.password_hash, undefined);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const refresh = r.setCookies.find((c) => c.startsWith('new_api_refresh='))!;
    assert.match(refresh, /HttpOnly/);
    assert.match(refresh, /SameSite=Strict/);
    assert.match(refresh, /Path=\/api\/user\/auth/);
    const hint = r.setCookies.find((c) => c.startsWith('new_api_has_session=1'))!;
    assert.doesNotMatch(hint, /HttpOnly/);
  });

  test('login by email works too', async () => {
    const r = await s.browser().login('alice@example.com', 'correct horse battery');
    assert.equal(r.json.success, true);
  });

  test('wrong password, unknown user and disabled user share one message', async () => {
    const wrong = await s.browser().login('alice', 'wrong password!');
    const unknown = await s.browser().login('nobody', 'whatever12345');
    const id = await s.createUser('bob', 'bob password 1');
    await s.services.users.setSecurity(id, { status: 2 });
    const disabled = await s.browser().login('bob', 'bob password 1');
    for (const r of [wrong, unknown, disabled]) {
      assert.equal(r.status, 200);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'LOGIN_FAILED');
      assert.equal(r.json.message, wrong.json.message);
      assert.equal(r.setCookies.length, 0);
    }
  });

  test('missing fields answer "Invalid parameters"', async () => {
    const b = s.browser();
    for (const body of [{}, { username: 'alice' }, { password: 'x' }, { username: '  ', password: 'abcdefgh' }]) {
      const r = await b.post('/api/user/login', body);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'LOGIN_INVALID_PARAMETERS');
    }
  });

  test('wrong types and malformed JSON get 400 with a stable code', async () => {
    const b = s.browser();
    const typed = await b.post('/api/user/login', { username: 5, password: ['x'] });
    assert.equal(typed.status, 400);
    assert.equal(typed.json.code, 'INVALID_PARAMETERS');
    const bad = await b.request('POST', '/api/user/login', { raw: '{"username":', headers: { 'content-type': 'application/json' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'INVALID_JSON');
    const form = await b.request('POST', '/api/user/login', { raw: 'a=b', headers: { 'content-type': 'text/plain' } });
    assert.equal(form.status, 415);
    const huge = await b.post('/api/user/login', { username: 'a', password: 'x'.repeat(400_000) });
    assert.equal(huge.status, 413);
    for (const r of [typed, bad, form, huge]) assert.doesNotMatch(r.text, /at .*\.ts|stack/i);
  });

  test('Chinese messages for Accept-Language zh', async () => {
    const r = await s.browser().post('/api/user/login', { username: 'alice', password: 'nope-nope' }, { 'accept-language': 'zh-CN' });
    assert.match(r.json.message, /用户名或密码错误/);
  });

  test('bcrypt hashes from new-api databases verify and are rehashed to argon2id', async () => {
    const bcrypt = (await import('bcryptjs')).default;
    const id = await s.createUser('legacy', 'placeholder-pass');
    await s.ctx.database.db.updateTable('users').set({ password_hash: bcrypt.hashSync('legacy password', 10) }).where('id', '=', id).execute();
    const r = await s.browser().login('legacy', 'legacy password');
    assert.equal(r.json.success, true);
    const row = await s.ctx.database.db.selectFrom('users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal((await s.browser().login('legacy', 'legacy password')).json.success, true);
  });

  test('no password or token value reaches the log', async () => {
    const text = s.log.text();
    assert.ok(text.length > 0);
    for (const secret of ['correct horse battery', 'bob password 1', 'legacy password', 'new_api_refresh=']) {
      assert.ok(!text.includes(secret), `log contains ${secret}`);
    }
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
  });
});

eachDatabase('A25 login switches', (v) => {
  test('password login disabled has its own message', async () => {
    const s = await startAccount(v, { env: { PASSWORD_LOGIN_ENABLED: 'false' } });
    try {
      await s.createUser('carol', 'carol password');
      const r = await s.browser().login('carol', 'carol password');
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'PASSWORD_LOGIN_DISABLED');
    } finally {
      await s.close();
    }
  });

  test('encrypted login: plain RSA-OAEP and v2 AES-GCM formats', async () => {
    const s = await startAccount(v, { env: { PASSWORD_LOGIN_ENCRYPTION_ENABLED: 'true' } });
    try {
      await s.createUser('dave', 'dave password');
      const b = s.browser();
      const key = (await b.get('/api/user/login/encryption-key')).json.data;
      assert.equal(key.enabled, true);
      assert.match(key.kid, /^[0-9a-f]{32}$/);
      const pub = crypto.createPublicKey(key.public_key);
      const legacy = crypto
        .publicEncrypt({ key: pub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from('dave password'))
        .toString('base64');
      const plainOnly = await b.post('/api/user/login', { username: 'dave', password: 'dave password' });
      assert.equal(plainOnly.json.code, 'LOGIN_INVALID_PARAMETERS');
      const r1 = await b.post('/api/user/login', { username: 'dave', password_encrypted: legacy, encryption_key_id: key.kid });
      assert.equal(r1.json.success, true);

      const aesKey = crypto.randomBytes(32);
      const iv = crypto.randomBytes(12);
      const wrapped = crypto.publicEncrypt(
        { key: pub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: Buffer.from('password-v2') },
        aesKey,
      );
      const c = crypto.createCipheriv('aes-256-gcm', aesKey, iv);
      c.setAAD(Buffer.from(`password-v2:${key.kid}`));
      const ct = Buffer.concat([c.update('dave password'), c.final(), c.getAuthTag()]);
      const v2 = ['v2', wrapped.toString('base64'), iv.toString('base64'), ct.toString('base64')].join('.');
      const r2 = await b.post('/api/user/login', { username: 'dave', password_encrypted: v2, encryption_key_id: key.kid });
      assert.equal(r2.json.success, true);

      const wrongKid = await b.post('/api/user/login', { username: 'dave', password_encrypted: v2, encryption_key_id: 'f'.repeat(32) });
      assert.equal(wrongKid.json.code, 'LOGIN_FAILED');
      const garbage = await b.post('/api/user/login', { username: 'dave', password_encrypted: 'AAAA', encryption_key_id: key.kid });
      assert.equal(garbage.json.code, 'LOGIN_FAILED');

      // The key pair persists: a second instance on the same database serves the same kid.
      const s2 = await startAccount(v, {
        env: { PASSWORD_LOGIN_ENCRYPTION_ENABLED: 'true' },
        databaseUrl: v.name === 'sqlite' ? `sqlite://${s.dataDir}/account.sqlite` : undefined,
      });
      try {
        if (v.name === 'sqlite') assert.equal((await s2.browser().get('/api/user/login/encryption-key')).json.data.kid, key.kid);
      } finally {
        await s2.close();
      }
    } finally {
      await s.close();
    }
  });

  test('A27 answers enabled:false when encryption is off', async () => {
    const s = await startAccount(v);
    try {
      const r = await s.browser().get('/api/user/login/encryption-key');
      assert.deepEqual(r.json, { success: true, message: '', data: { enabled: false } });
    } finally {
      await s.close();
    }
  });
});
