import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startFakeWeChat } from '../helpers/wechat.js';
import { codeAt, enrolTotp } from './twofactor-helpers.js';

// The reference's own WeChat and Telegram paths, which new-api's dashboard calls, are SPEC's A09, A10,
// A08 and A07 under another name: same handler, authentication, proof and rate limits.

const BOT_TOKEN = '777:alias-bot-token-for-tests';
const now = () => Math.floor(Date.now() / 1000);

/** The Login Widget's signed query (HMAC-SHA256 keyed by SHA-256 of the bot token over the sorted lines). */
function widget(fields: Record<string, string | number>) {
  const data = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('\n');
  const hash = crypto.createHmac('sha256', crypto.createHash('sha256').update(BOT_TOKEN).digest()).update(data).digest('hex');
  return new URLSearchParams({ ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])), hash }).toString();
}

eachDatabase('the reference\'s WeChat and Telegram paths (R13–R16)', (v) => {
  let s: AccountServer;
  let wx: Awaited<ReturnType<typeof startFakeWeChat>>;
  before(async () => {
    wx = await startFakeWeChat('wx-alias-token');
    s = await startAccount(v, {
      env: { WECHAT_SERVER_ADDRESS: wx.url, WECHAT_SERVER_TOKEN: 'wx-alias-token', TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_BOT_NAME: 'alias_bot' },
    });
    await s.createUser('al1', 'al1 password!');
  });
  after(async () => {
    await s.close();
    await wx.close();
  });

  test('GET /api/oauth/wechat signs in like A09; POST /api/oauth/wechat/bind binds like A10, proof included', async () => {
    const b = s.browser();
    await b.login('al1', 'al1 password!');
    wx.issue('bind-code', 'openid-al1');
    const noProof = await b.post('/api/oauth/wechat/bind', { code: 'bind-code' });
    assert.equal(noProof.status, 403);
    assert.equal(noProof.json.code, 'SECURITY_PROOF_REQUIRED');
    assert.equal(noProof.json.data.scope, 'account.binding.bind');
    const proof = await b.post('/api/verify', { method: 'password', scope: 'account.binding.bind', password: 'al1 password!', context: { provider: 'wechat', code: 'bind-code' } });
    const bound = await b.post('/api/oauth/wechat/bind', { code: 'bind-code' }, { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(bound.json.success, true, bound.text);
    assert.equal((await s.browser().post('/api/oauth/wechat/bind', { code: 'x' })).status, 401);

    wx.issue('login-code', 'openid-al1');
    const login = await s.browser().get('/api/oauth/wechat?code=login-code');
    assert.equal(login.json.success, true, login.text);
    assert.equal(login.json.data.user.username, 'al1');
    assert.equal(login.json.data.session.login_method, 'wechat');
    assert.equal((await s.browser().get('/api/oauth/wechat?code=login-code')).json.code, 'WECHAT_CODE_INVALID');
  });

  test('POST /api/oauth/telegram/bind/start starts A07; GET /api/oauth/telegram/login signs in like A08', async () => {
    await s.createUser('al2', 'al2 password!');
    const b = s.browser();
    await b.login('al2', 'al2 password!');
    const start = await b.post('/api/oauth/telegram/bind/start', {});
    assert.equal(start.json.success, true, start.text);
    assert.equal(start.json.data.bot_name, 'alias_bot');
    const bind = await s.browser().get(`${start.json.data.callback_url}?${widget({ id: 5150, first_name: 'Al', auth_date: now() })}`);
    assert.match(bind.headers.get('location') ?? '', /telegram_bind=success/);
    assert.equal((await s.browser().post('/api/oauth/telegram/bind/start', {})).status, 401);

    const login = await s.browser().get(`/api/oauth/telegram/login?${widget({ id: 5150, first_name: 'Al', auth_date: now() - 30 })}`);
    assert.equal(login.json.success, true, login.text);
    assert.equal(login.json.data.user.username, 'al2');
    assert.equal(login.json.data.session.login_method, 'telegram');
  });

  test('a WeChat user with two-factor gets require_2fa and the pending-login cookie through the alias', async () => {
    await s.createUser('al3', 'al3 password!');
    const { b, secret } = await enrolTotp(s, 'al3', 'al3 password!');
    wx.issue('bind-3', 'openid-al3');
    const totpProof = await b.post('/api/verify', { method: '2fa', scope: 'account.binding.bind', code: codeAt(secret), context: { provider: 'wechat', code: 'bind-3' } });
    assert.equal((await b.post('/api/oauth/wechat/bind', { code: 'bind-3' }, { 'x-security-proof': totpProof.json.data.proof_token })).json.success, true);
    wx.issue('login-3', 'openid-al3');
    const browser = s.browser();
    const challenge = await browser.get('/api/oauth/wechat?code=login-3');
    assert.equal(challenge.json.data.require_2fa, true);
    assert.equal(challenge.json.data.flow_token, browser.cookies.get('new_api_pending_login'));
    const done = await browser.post('/api/user/login/2fa', { code: codeAt(secret, 1) });
    assert.equal(done.json.success, true, done.text);
    assert.equal(done.json.data.session.login_method, 'wechat');
  });
});

eachDatabase('an alias shares its operation\'s rate-limit bucket and switch', (v) => {
  test('critical bucket counted across A09 and /api/oauth/wechat; ENABLED_OPERATIONS switches both', async () => {
    const limited = await startAccount(v, { env: { CRITICAL_RATE_LIMIT_ENABLED: 'true', CRITICAL_RATE_LIMIT: '2' } });
    const switched = await startAccount(v, { env: { ENABLED_OPERATIONS: 'A25,A24' } });
    try {
      assert.equal((await limited.browser().get('/api/oauth/social?code=a')).json.code, 'WECHAT_DISABLED');
      assert.equal((await limited.browser().get('/api/oauth/wechat?code=b')).json.code, 'WECHAT_DISABLED');
      const third = await limited.browser().get('/api/oauth/wechat?code=c');
      assert.equal(third.status, 429);
      assert.equal((await limited.browser().get('/api/oauth/social?code=d')).status, 429);
      for (const path of ['/api/oauth/social', '/api/oauth/wechat']) {
        const off = await switched.browser().get(`${path}?code=x`);
        assert.equal(off.status, 404, path);
        assert.equal(off.json.code, 'OPERATION_DISABLED');
      }
    } finally {
      await limited.close();
      await switched.close();
    }
  });
});
