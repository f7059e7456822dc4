import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startFakeWeChat } from '../helpers/wechat.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';

// Telegram and WeChat login buttons of the account console, shown when those providers are configured: the
// WeChat code goes to A09 (a fake WeChat server turns it into an openid); Telegram's login page is played by
// the test, which answers its URL with the redirect Telegram makes (signed fields in #tgAuthResult) to A08.
const BOT_TOKEN = '424242:console-telegram-bot-token';
let s: AccountServer;
let plain: AccountServer;
let wx: Awaited<ReturnType<typeof startFakeWeChat>>;
const skip = browserSkip;

before(async () => {
  if (skip) return;
  wx = await startFakeWeChat('wx-token');
  s = await startAccount({ name: 'sqlite' }, { env: { WECHAT_SERVER_ADDRESS: wx.url, WECHAT_SERVER_TOKEN: 'wx-token', TELEGRAM_BOT_TOKEN: BOT_TOKEN, TELEGRAM_BOT_NAME: 'console_bot' } });
  plain = await startAccount({ name: 'sqlite' });
  const id = await s.createUser('jack', 'jack password 1');
  await (s.ctx.database.db as any).updateTable('users').set({ telegram_id: '4040' }).where('id', '=', id).execute();
});

after(async () => {
  if (skip) return;
  assert.ok(!s.log.text().includes(BOT_TOKEN.split(':')[1]!), 'the bot token leaked');
  await s.close();
  await plain.close();
  await wx.close();
});

/** What Telegram's login page sends back: the fields and hash = HMAC-SHA256(SHA-256(bot token), sorted lines). */
function tgAuthResult(fields: Record<string, string | number>) {
  const data = Object.keys(fields).sort().map((k) => `${k}=${fields[k]}`).join('\n');
  const hash = crypto.createHmac('sha256', crypto.createHash('sha256').update(BOT_TOKEN).digest()).update(data).digest('hex');
  return Buffer.from(JSON.stringify({ ...fields, hash })).toString('base64url');
}

const sessionsOf = async (server: AccountServer, method: string) =>
  (await server.ctx.database.db.selectFrom('user_sessions').innerJoin('users', 'users.id', 'user_sessions.user_id').select('users.username').where('login_method', '=', method).where('user_sessions.status', '=', 'active').execute()).map((r) => r.username);

test('account console: WeChat and Telegram login when configured, no buttons otherwise', { skip }, async () => {
  const browser = await launch();
  try {
    // Without the providers configured there are no buttons.
    const bare = await browser.newPage();
    await bare.goto(plain.url + '/login');
    await bare.getByRole('button', { name: 'Log in', exact: true }).waitFor();
    assert.equal(await bare.getByRole('button', { name: /Telegram|WeChat/ }).count(), 0);

    // WeChat: a wrong code is refused with its catalog code; a fresh one signs a new user up and in.
    const context = await browser.newContext({ viewport: { width: 1000, height: 760 } });
    const page = await context.newPage();
    await page.goto(s.url + '/login');
    await page.getByRole('button', { name: 'Continue with WeChat' }).click();
    await page.getByLabel('WeChat code').fill('not-issued');
    await page.getByRole('form', { name: 'WeChat' }).getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'WECHAT_CODE_INVALID' }).waitFor();
    await screenshot(page, 'account-login-social');
    wx.issue('wx-code-1', 'openid-console');
    await page.getByLabel('WeChat code').fill('wx-code-1');
    await page.getByRole('form', { name: 'WeChat' }).getByRole('button', { name: 'Log in' }).click();
    await page.getByText(/Signed in as wechat_\d+/).waitFor();
    assert.equal((await sessionsOf(s, 'wechat')).length, 1);

    // Telegram: the button goes to Telegram's login page for this bot, which returns to /oauth/telegram.
    const tg = await browser.newPage();
    let asked: URL | null = null;
    await tg.route('https://oauth.telegram.org/**', (route) => {
      asked = new URL(route.request().url());
      const back = `${asked.searchParams.get('return_to')}#tgAuthResult=${tgAuthResult({ id: 4040, first_name: 'Jack', username: 'jacktg', auth_date: Math.floor(Date.now() / 1000) })}`;
      return route.fulfill({ status: 302, headers: { location: back } });
    });
    await tg.goto(s.url + '/login');
    await tg.getByRole('button', { name: 'Continue with Telegram' }).click();
    await tg.getByText('Signed in as jack').waitFor();
    assert.equal(asked!.searchParams.get('bot_id'), '424242');
    assert.equal(asked!.searchParams.get('return_to'), `${s.url}/oauth/telegram`);
    assert.deepEqual(await sessionsOf(s, 'telegram'), ['jack']);
    assert.ok(!(await tg.content()).includes(BOT_TOKEN), 'the page never carries the bot token');
  } finally {
    await browser.close();
  }
});

test('account console: binding Telegram (A07 → Telegram → A06) and WeChat (step-up, A10) on the security page', { skip }, async () => {
  await s.createUser('kate', 'kate password 1');
  const api = s.browser();
  await api.login('kate', 'kate password 1');
  const bindings = async () => (await api.get('/api/user/oauth/bindings')).json.data.map((b: any) => `${b.provider_id}:${b.provider_user_id}`).sort();
  const browser = await launch();
  try {
    const page = await browser.newPage();
    let telegramId = 4040; // already bound to jack: the first attempt is refused
    await page.route('https://oauth.telegram.org/**', (route) => {
      const asked = new URL(route.request().url());
      const back = `${asked.searchParams.get('return_to')}#tgAuthResult=${tgAuthResult({ id: telegramId, first_name: 'Kate', auth_date: Math.floor(Date.now() / 1000) })}`;
      return route.fulfill({ status: 302, headers: { location: back } });
    });
    await page.goto(s.url + '/login');
    await page.getByLabel('Username or email').fill('kate');
    await page.getByLabel('Password', { exact: true }).fill('kate password 1');
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.getByText('Signed in as kate').waitFor();

    // WeChat: the code goes through step-up (password) and A10.
    await page.getByRole('button', { name: 'Link WeChat' }).click();
    wx.issue('wx-bind-1', 'openid-kate');
    await page.getByLabel('WeChat code').fill('wx-bind-1');
    await page.getByRole('form', { name: 'Link WeChat' }).getByRole('button', { name: 'Confirm' }).click();
    const stepUp = page.getByRole('dialog');
    await stepUp.getByRole('radio', { name: 'Password' }).check();
    await stepUp.getByRole('textbox', { name: 'Password' }).fill('kate password 1');
    await stepUp.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('WeChat is now bound to your account.').waitFor();
    await page.getByRole('button', { name: 'Link WeChat' }).waitFor({ state: 'detached' });
    assert.deepEqual(await bindings(), ['wechat:openid-kate']);

    // Telegram: an id bound elsewhere is refused with the reference's reason, a fresh one is bound.
    await page.getByRole('button', { name: 'Link Telegram' }).click();
    await page.getByRole('alert').filter({ hasText: 'TELEGRAM_BIND_ALREADY_BOUND' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/oauth/chatbot');
    telegramId = 5050;
    await page.getByRole('link', { name: 'Security' }).first().click();
    await page.getByRole('button', { name: 'Link Telegram' }).click();
    await page.getByText('Telegram is now bound to your account.').waitFor();
    assert.deepEqual(await bindings(), ['telegram:5050', 'wechat:openid-kate']);
    await page.getByRole('link', { name: 'Security' }).first().click();
    await page.locator('li', { hasText: 'Telegram' }).getByText('5050').waitFor();
    await screenshot(page, 'account-bindings-social');
  } finally {
    await browser.close();
  }
});
