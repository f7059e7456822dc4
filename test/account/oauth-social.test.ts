import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startFakeWeChat } from '../helpers/wechat.js';
import type { Browser } from '../helpers/http.js';

const BOT_TOKEN = '123456:telegram-bot-token-for-tests';

/** What the Telegram Login Widget sends: the fields plus hash = HMAC-SHA256(SHA-256(bot token), sorted lines). */
function widget(fields: Record<string, string | number>, token = BOT_TOKEN) {
  const data = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('\n');
  const key = crypto.createHash('sha256').update(token).digest();
  const hash = crypto.createHmac('sha256', key).update(data).digest('hex');
  return new URLSearchParams({ ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])), hash }).toString();
}
const now = () => Math.floor(Date.now() / 1000);

async function proof(b: Browser, password: string, context: unknown) {
  const r = await b.post('/api/verify', { method: 'password', scope: 'account.binding.bind', password, context });
  assert.equal(r.json.success, true, r.text);
  return r.json.data.proof_token as string;
}

eachDatabase('A09 / A10 WeChat and A06–A08 Telegram', (v) => {
  let s: AccountServer;
  let wx: Awaited<ReturnType<typeof startFakeWeChat>>;
  before(async () => {
    wx = await startFakeWeChat('wx-server-token');
    s = await startAccount(v, {
      env: { WECHAT_SERVER_ADDRESS: wx.url, WECHAT_SERVER_TOKEN: 'wx-server-token', TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_BOT_NAME: 'test_bot' },
    });
    await s.createUser('ivy', 'ivy password 12');
    await s.createUser('jack', 'jack password 1');
  });
  after(async () => {
    await s.close();
    await wx.close();
  });

  test('A09 signs a new WeChat user up as wechat_<n>, then logs the same user in; bad codes are refused', async () => {
    wx.issue('code-1', 'openid-new');
    const r = await s.browser().get('/api/oauth/social?code=code-1');
    assert.equal(r.json.success, true, r.text);
    assert.match(r.json.data.user.username, /^wechat_\d+$/);
    assert.equal(r.json.data.user.display_name, 'WeChat User');
    assert.equal(r.json.data.session.login_method, 'wechat');
    wx.issue('code-2', 'openid-new');
    const again = await s.browser().get('/api/oauth/social?code=code-2');
    assert.equal(again.json.data.user.id, r.json.data.user.id);
    const replay = await s.browser().get('/api/oauth/social?code=code-2');
    assert.equal(replay.json.code, 'WECHAT_CODE_INVALID');
    assert.equal((await s.browser().get('/api/oauth/social')).json.code, 'WECHAT_CODE_INVALID');
    assert.ok(!s.log.text().includes('wx-server-token'));
  });

  test('A10 binds WeChat with a proof for that code; an openid bound elsewhere is refused', async () => {
    const b = s.browser();
    await b.login('ivy', 'ivy password 12');
    wx.issue('bind-1', 'openid-ivy');
    const noProof = await b.post('/api/oauth/social/bind', { code: 'bind-1' });
    assert.equal(noProof.status, 403);
    const p = await proof(b, 'ivy password 12', { provider: 'wechat', code: 'bind-1' });
    const r = await b.post('/api/oauth/social/bind', { code: 'bind-1' }, { 'x-security-proof': p });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual(r.json.data, { notification_warning: false });
    wx.issue('login-ivy', 'openid-ivy');
    assert.equal((await s.browser().get('/api/oauth/social?code=login-ivy')).json.data.user.username, 'ivy');

    const jack = s.browser();
    await jack.login('jack', 'jack password 1');
    wx.issue('bind-2', 'openid-ivy');
    const p2 = await proof(jack, 'jack password 1', { provider: 'wechat', code: 'bind-2' });
    const taken = await jack.post('/api/oauth/social/bind', { code: 'bind-2' }, { 'x-security-proof': p2 });
    assert.equal(taken.json.code, 'WECHAT_ALREADY_BOUND');
  });

  test('A07 → A06 binds Telegram and redirects with 302; A08 logs in once per signed assertion', async () => {
    const b = s.browser();
    await b.login('jack', 'jack password 1');
    const st = await b.post('/api/oauth/chatbot/bind/start', {});
    assert.equal(st.json.success, true, st.text);
    const { flow_token, callback_url } = st.json.data;
    assert.equal(callback_url, `/api/oauth/chatbot/bind/${flow_token}`);

    const forged = widget({ id: 4040, first_name: 'Jack', auth_date: now() }, '999:wrong-token');
    const bad = await s.browser().get(`${callback_url}?${forged}`);
    assert.equal(bad.status, 302);
    assert.equal(bad.headers.get('location'), '/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_INVALID_REQUEST');

    const good = await s.browser().get(`${callback_url}?${widget({ id: 4040, first_name: 'Jack', username: 'jacktg', auth_date: now() })}`);
    assert.equal(good.status, 302);
    assert.equal(good.headers.get('location'), `/oauth/chatbot?telegram_bind=success&flow_token=${flow_token}`);
    const reuse = await s.browser().get(`${callback_url}?${widget({ id: 4040, first_name: 'Jack', auth_date: now() - 1 })}`);
    assert.equal(reuse.headers.get('location'), '/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_FLOW_INVALID');

    const assertion = widget({ id: 4040, first_name: 'Jack', auth_date: now() - 2 });
    const login = await s.browser().get(`/api/oauth/chatbot/login?${assertion}`);
    assert.equal(login.json.success, true, login.text);
    assert.equal(login.json.data.user.username, 'jack');
    assert.equal(login.json.data.session.login_method, 'telegram');
    const replay = await s.browser().get(`/api/oauth/chatbot/login?${assertion}`);
    assert.equal(replay.status, 403);
    assert.equal(replay.json.code, 'TELEGRAM_ASSERTION_USED');
  });

  test('A08 refuses stale, future, tampered, duplicated and unbound assertions', async () => {
    const get = (q: string) => s.browser().get(`/api/oauth/chatbot/login?${q}`);
    assert.equal((await get(widget({ id: 4040, auth_date: now() - 400 }))).json.code, 'TELEGRAM_INVALID_REQUEST');
    assert.equal((await get(widget({ id: 4040, auth_date: now() + 300 }))).json.code, 'TELEGRAM_INVALID_REQUEST');
    const tampered = widget({ id: 4040, auth_date: now() - 3 }).replace('id=4040', 'id=4041');
    assert.equal((await get(tampered)).json.code, 'TELEGRAM_INVALID_REQUEST');
    const dup = widget({ id: 4040, auth_date: now() - 4 }) + '&id=4040';
    assert.equal((await get(dup)).json.code, 'TELEGRAM_INVALID_REQUEST');
    assert.equal((await get('')).json.code, 'TELEGRAM_INVALID_REQUEST');
    assert.equal((await get(widget({ id: 5050, auth_date: now() - 5 }))).json.code, 'TELEGRAM_NOT_BOUND');
  });

  test('A06 refuses a flow whose session was logged out, and an identity bound elsewhere', async () => {
    const b = s.browser();
    await b.login('ivy', 'ivy password 12');
    const st = (await b.post('/api/oauth/chatbot/bind/start', {})).json.data;
    const logout = await b.post('/api/user/auth/logout', {});
    assert.equal(logout.json.success, true, logout.text);
    const r = await s.browser().get(`${st.callback_url}?${widget({ id: 7070, auth_date: now() - 6 })}`);
    assert.equal(r.headers.get('location'), '/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_SESSION_INVALID');

    const b2 = s.browser();
    await b2.login('ivy', 'ivy password 12');
    const st2 = (await b2.post('/api/oauth/chatbot/bind/start', {})).json.data;
    const taken = await s.browser().get(`${st2.callback_url}?${widget({ id: 4040, auth_date: now() - 7 })}`);
    assert.equal(taken.headers.get('location'), '/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_ALREADY_BOUND');
    assert.equal((await s.browser().post('/api/oauth/chatbot/bind/start', {})).status, 401);
  });
});

eachDatabase('WeChat and Telegram switched off', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
    await s.createUser('kim', 'kim password 12');
  });
  after(() => s.close());

  test('every route answers its disabled code', async () => {
    assert.equal((await s.browser().get('/api/oauth/social?code=x')).json.code, 'WECHAT_DISABLED');
    assert.equal((await s.browser().get('/api/oauth/chatbot/login?id=1')).json.code, 'TELEGRAM_DISABLED');
    const b = s.browser();
    await b.login('kim', 'kim password 12');
    assert.equal((await b.post('/api/oauth/social/bind', { code: 'x' })).json.code, 'WECHAT_DISABLED');
    assert.equal((await b.post('/api/oauth/chatbot/bind/start', {})).json.code, 'TELEGRAM_DISABLED');
    const r = await s.browser().get('/api/oauth/chatbot/bind/whatever');
    assert.equal(r.headers.get('location'), '/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_DISABLED');
  });
});
