import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { SESSION_SECRET, startAccount, type AccountServer } from '../helpers/account.js';
import { startOAuthAccount } from '../helpers/oidc.js';
import { startSmtp } from '../helpers/smtp.js';
import { accountOperations } from '../../src/account/app.js';

// What new-api's dashboard reads and writes besides signing in: GET /api/status and /api/setup (AS01,
// AS02), the own profile GET/PUT /api/user/self (AS03, AS04), and its pages outside SPEC (501).

const SECRETS = ['gh-secret-value', 'oidc-secret-value', '4242:telegram-bot-secret', 'wx-server-token-secret', SESSION_SECRET];

eachDatabase('GET /api/status and /api/setup for new-api\'s sign-in page (AS01, AS02)', (v) => {
  let peers: Awaited<ReturnType<typeof startOAuthAccount>>;
  before(async () => {
    peers = await startOAuthAccount(v, {
      SYSTEM_NAME: 'Acme AI',
      TELEGRAM_BOT_TOKEN: '4242:telegram-bot-secret',
      TELEGRAM_BOT_NAME: 'acme_bot',
      WECHAT_SERVER_ADDRESS: 'http://127.0.0.1:9',
      WECHAT_SERVER_TOKEN: 'wx-server-token-secret',
      WECHAT_QRCODE_IMAGE_URL: 'https://cdn.example.test/wechat-qr.png',
      PASSKEY_ENABLED: 'true',
      PASSKEY_RP_ID: 'dash.example.test',
      PASSKEY_ORIGINS: 'http://dash.example.test',
      REGISTER_ENABLED: 'false',
      EMAIL_VERIFICATION_ENABLED: 'true',
    });
  });
  after(() => peers.close());

  test('anonymous, the reference\'s field names, from configuration, nothing secret', async () => {
    const r = await peers.s.browser().get('/api/status');
    assert.equal(r.status, 200);
    assert.equal(r.json.success, true);
    const d = r.json.data;
    assert.equal(d.system_name, 'Acme AI');
    assert.equal(d.server_address, 'http://dash.example.test');
    assert.equal(d.version, '0.1.0');
    assert.equal(d.setup, true);
    assert.equal(d.github_oauth, true);
    assert.equal(d.github_client_id, 'gh-client');
    assert.equal(d.discord_oauth, false);
    assert.equal(d.discord_client_id, '');
    assert.equal(d.linuxdo_oauth, false);
    assert.equal(d.oidc_enabled, true);
    assert.equal(d.oidc_client_id, 'oidcclient');
    assert.match(d.oidc_authorization_endpoint, /^http:\/\/(127\.0\.0\.1|localhost):\d+\/authorize$/);
    assert.equal(d.telegram_oauth, true);
    assert.equal(d.telegram_bot_name, 'acme_bot');
    assert.equal(d.wechat_login, true);
    assert.equal(d.wechat_qrcode, 'https://cdn.example.test/wechat-qr.png');
    assert.equal(d.passkey_login, true);
    assert.equal(d.register_enabled, false);
    assert.equal(d.email_verification, true);
    assert.equal(d.turnstile_check, false);
    assert.deepEqual(d.custom_oauth_providers, []);
    for (const secret of SECRETS) assert.ok(!r.text.includes(secret), `status leaks ${secret.slice(0, 6)}…`);
  });

  test('the defaults: nothing configured is off; /api/setup says initialised', async () => {
    const s = await startAccount(v);
    try {
      const d = (await s.browser().get('/api/status')).json.data;
      for (const flag of ['github_oauth', 'discord_oauth', 'linuxdo_oauth', 'oidc_enabled', 'telegram_oauth', 'wechat_login', 'passkey_login', 'turnstile_check']) {
        assert.equal(d[flag], false, flag);
      }
      assert.equal(d.register_enabled, true);
      assert.equal(d.system_name, 'New API');
      assert.equal(d.server_address, s.url);
      const setup = await s.browser().get('/api/setup');
      assert.equal(setup.status, 200);
      assert.deepEqual(setup.json, { success: true, message: '', data: { status: true, root_init: true, database_type: '' } });
    } finally {
      await s.close();
    }
  });
});

eachDatabase('the own profile from new-api\'s dashboard (AS03, AS04)', (v) => {
  let s: AccountServer;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  before(async () => {
    smtp = await startSmtp();
    s = await startAccount(v, { env: { SMTP_URL: smtp.url } });
  });
  after(async () => {
    await s.close();
    await smtp.close();
  });

  test('GET /api/user/self: the caller\'s profile with the reference\'s fields, never a secret; anonymous 401', async () => {
    const id = await s.createUser('pf1', 'pf1 password!', { email: 'pf1@example.com' });
    await s.ctx.database.db.updateTable('users').set({ github_id: '9001' } as never).where('id', '=', id).execute();
    const b = s.browser();
    await b.login('pf1', 'pf1 password!');
    const r = await b.get('/api/user/self', { 'new-api-user': String(id) });
    assert.equal(r.status, 200);
    const d = r.json.data;
    assert.equal(d.id, id);
    assert.equal(d.username, 'pf1');
    assert.equal(d.display_name, 'pf1');
    assert.equal(d.role, 1);
    assert.equal(d.status, 1);
    assert.equal(d.email, 'pf1@example.com');
    assert.equal(d.group, 'default');
    assert.equal(d.github_id, '9001');
    assert.equal(d.discord_id, '');
    assert.equal(d.quota, 0);
    assert.equal(d.used_quota, 0);
    assert.equal(d.request_count, 0);
    assert.ok(!/password|hash|access_token/i.test(Object.keys(d).join(' ')), Object.keys(d).join(' '));
    const anonymous = await s.browser().get('/api/user/self');
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.json.code, 'AUTH_UNAUTHORIZED');
  });

  test('PUT /api/user/self changes the display name; bad input is refused before anything changes', async () => {
    await s.createUser('pf2', 'pf2 password!');
    const b = s.browser();
    await b.login('pf2', 'pf2 password!');
    const put = (body: unknown) => b.request('PUT', '/api/user/self', { body });
    const ok = await put({ display_name: '  Pat Two ' });
    assert.deepEqual(ok.json, { success: true, message: '' });
    assert.equal((await b.get('/api/user/self')).json.data.display_name, 'Pat Two');
    for (const body of [{ display_name: '' }, { display_name: 'x'.repeat(21) }, {}, { password: '' }]) {
      const r = await put(body);
      assert.equal(r.status, 200, JSON.stringify(body));
      assert.equal(r.json.code, 'SELF_UPDATE_INVALID', JSON.stringify(body));
    }
    const bad = await put({ display_name: 'Pat', password: 'short', original_password: 'pf2 password!' });
    assert.equal(bad.json.code, 'SELF_UPDATE_INVALID');
    assert.equal((await b.get('/api/user/self')).json.data.display_name, 'Pat Two', 'nothing changed');
    const unknown = await put({ language: 'zh' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.json.code, 'INVALID_PARAMETERS');
  });

  test('PUT /api/user/self changes the password: old one required, other sessions end, this one rotates, a notice is mailed', async () => {
    const id = await s.createUser('pf3', 'pf3 password!', { email: 'pf3@example.com' });
    const other = s.browser();
    await other.login('pf3', 'pf3 password!');
    const b = s.browser();
    await b.login('pf3', 'pf3 password!');
    const put = (body: unknown) => b.request('PUT', '/api/user/self', { body });
    const wrong = await put({ original_password: 'not it at all', password: 'pf3 new password!' });
    assert.equal(wrong.status, 200);
    assert.equal(wrong.json.code, 'SELF_ORIGINAL_PASSWORD_WRONG');
    const missing = await put({ password: 'pf3 new password!' });
    assert.equal(missing.json.code, 'SELF_ORIGINAL_PASSWORD_WRONG');
    const common = await put({ original_password: 'pf3 password!', password: 'password123' });
    assert.equal(common.json.code, 'SELF_UPDATE_INVALID');

    const oldToken = b.accessToken;
    const ok = await put({ original_password: 'pf3 password!', password: 'pf3 new password!' });
    assert.equal(ok.json.success, true, ok.text);
    assert.match(ok.json.data.access_token, /^ey/);
    assert.equal(ok.json.data.session.current, true);
    // The old access token of this session dies with the auth version; the rotated one and a refresh work.
    assert.equal((await b.get('/api/user/self')).json.code, 'AUTH_SESSION_REVOKED');
    b.accessToken = ok.json.data.access_token;
    assert.equal((await b.get('/api/user/self')).status, 200);
    assert.equal((await b.post('/api/user/auth/refresh')).json.success, true);
    // Every other session is revoked.
    assert.equal((await other.post('/api/user/auth/refresh')).json.code, 'AUTH_SESSION_REVOKED');
    assert.notEqual(oldToken, b.accessToken);
    assert.equal((await s.browser().login('pf3', 'pf3 password!')).json.code, 'LOGIN_FAILED');
    assert.equal((await s.browser().login('pf3', 'pf3 new password!')).json.success, true);
    const [mail] = await smtp.waitFor('pf3@example.com');
    assert.match(mail.subject, /Account security change/);
    assert.match(mail.text, /password changed/);
    assert.ok(!mail.text.includes('pf3 new password!'));
    assert.ok(!s.log.text().includes('pf3 new password!'));
    assert.ok(id > 0);
  });

  test('a password change needs a browser session and an existing password', async () => {
    const id = await s.createUser('pf4', 'pf4 password!');
    const pat = await s.services.users.createAccessToken(id);
    const viaPat = await s.browser().request('PUT', '/api/user/self', {
      body: { original_password: 'pf4 password!', password: 'pf4 new password!' },
      headers: { authorization: `Bearer ${pat}` },
    });
    assert.equal(viaPat.status, 403);
    assert.equal(viaPat.json.code, 'AUTH_SESSION_REQUIRED');
    const byPat = await s.browser().request('PUT', '/api/user/self', { body: { display_name: 'By PAT' }, headers: { authorization: `Bearer ${pat}` } });
    assert.equal(byPat.json.success, true, 'the display name needs no session');

    const oauthOnly = await s.services.users.insertUser({ username: 'pf5', password: null });
    const session = await s.services.sessions.issue((await s.services.users.byId(oauthOnly))!, 'oauth:github', { ip: '127.0.0.1', userAgent: 't' });
    const b = s.browser();
    b.accessToken = session.accessToken;
    const none = await b.request('PUT', '/api/user/self', { body: { original_password: '', password: 'pf5 first password!' } });
    assert.equal(none.json.code, 'SELF_PASSWORD_NOT_SET');
  });
});

eachDatabase('new-api dashboard routes outside SPEC answer 501 api_not_implemented', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
  });
  after(() => s.close());

  test('after their authentication, in the error envelope, and listed in the manifest', async () => {
    // AP placeholders (the AG routes of the gateway console's pages: test/account/gateway-console-routes.test.ts).
    const placeholders = accountOperations().filter((o) => o.state === 'placeholder' && o.spec.id.startsWith('AP'));
    assert.ok(placeholders.length >= 15);
    for (const path of ['/api/mj/self', '/api/user/pay', '/api/user/checkin', '/api/subscription/epay/pay']) {
      assert.ok(placeholders.some((o) => o.spec.path === path), path);
    }
    // The customer API is served now (AP01–AS17), no longer a placeholder.
    // So are the not-configured answers of test/account/dashboard-unconfigured.test.ts.
    for (const path of ['/api/token/', '/api/log/self', '/api/user/topup', '/api/pricing', '/api/user/models', '/api/notice', '/api/user/aff', '/api/user/topup/info']) {
      assert.ok(!placeholders.some((o) => o.spec.path === path), path);
    }
    await s.createUser('ph1', 'ph1 password!');
    const b = s.browser();
    await b.login('ph1', 'ph1 password!');
    for (const op of placeholders) {
      const path = op.spec.path.replace(/:\w+/g, '7');
      const anonymous = await s.browser().request(op.spec.method, path, { headers: { origin: 'x' } });
      if (op.spec.auth === 'customer') {
        assert.equal(anonymous.status, 401, path);
        assert.equal(anonymous.json.code, 'AUTH_UNAUTHORIZED');
      }
      const r = await b.request(op.spec.method, path, op.spec.method === 'GET' ? {} : { body: {} });
      assert.equal(r.status, 501, `${op.spec.method} ${path}: ${r.text}`);
      assert.deepEqual(Object.keys(r.json).sort(), ['code', 'message', 'success']);
      assert.equal(r.json.code, op.spec.id === 'AP41' ? 'GATEWAY_CONSOLE_ONLY' : 'api_not_implemented');
    }
  });
});
