import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import type { Browser as HttpBrowser } from '../helpers/http.js';
import { ROLE, USER_STATUS } from '../../src/account/db.js';
import { enrolTotp } from '../account/twofactor-helpers.js';

// The admin user list of the account console (AS05–AS08): paging, search, disabling in the console's own
// dialog (every session of the user ends), enabling again, in English and Chinese, on a desktop and a
// 390 px phone; and the sessions page naming browser and system instead of the raw User-Agent. Each change
// is read back through the API.
let s: AccountServer;
let admin: HttpBrowser;
/** zed's own signed-in session (the one that enrolled two-factor). */
let zedSession: HttpBrowser;
const ids: Record<string, number> = {};
const skip = browserSkip;
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

before(async () => {
  if (skip) return;
  s = await startAccount({ name: 'sqlite' });
  ids.admin = await s.createUser('root1', 'root password 1', { role: ROLE.admin });
  for (let i = 1; i <= 12; i++) {
    const n = String(i).padStart(2, '0');
    ids[`user${n}`] = await s.createUser(`user${n}`, `user${n} password`, { email: `user${n}@example.com` });
  }
  ids.zed = await s.createUser('zed', 'zed password 1', { email: 'zed@example.org' });
  zedSession = (await enrolTotp(s, 'zed', 'zed password 1')).b;
  admin = s.browser();
  await admin.login('root1', 'root password 1');
});

after(async () => {
  if (!skip) await s.close();
});

async function login(page: Page, username: string, password: string) {
  await page.goto(s.url + '/login');
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.getByText(`Signed in as ${username}`).waitFor();
}

const rowNames = (page: Page) => page.locator('table.user-list tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-user')));
const apiNames = async (q: string) => (await admin.get(q)).json.data.items.map((u: any) => u.username);

test('account console: admin user list (AS05-AS08): search, pages, disable with confirmation, en + zh, 390 px', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await login(page, 'root1', 'root password 1');
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'All users' }).waitFor();
    await page.getByText('Page 1 of 2 · 14 users').waitFor();
    assert.deepEqual(await rowNames(page), await apiNames('/api/user/?p=1&page_size=10'));
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2 of 2 · 14 users').waitFor();
    assert.deepEqual(await rowNames(page), await apiNames('/api/user/?p=2&page_size=10'));
    assert.ok((await rowNames(page)).includes('root1'));

    // Search by username, email and id; role and status filters.
    const search = async (keyword: string, zh = false) => {
      await page.getByLabel(zh ? '搜索用户' : 'Search users').fill(keyword);
      await page.getByRole('button', { name: zh ? '搜索' : 'Search', exact: true }).click();
    };
    await search('zed');
    await page.getByText('Page 1 of 1 · 1 users').waitFor();
    const zed = page.locator('tr[data-user="zed"]');
    assert.equal(await zed.locator('[data-col="twofa"]').innerText(), 'On');
    assert.equal(await zed.locator('[data-col="status"]').innerText(), 'Enabled');
    await search('USER05@EXAMPLE');
    await page.locator('tr[data-user="user05"]').waitFor();
    assert.deepEqual(await rowNames(page), ['user05']);
    await search(String(ids.zed));
    await page.locator('tr[data-user="zed"]').waitFor();
    await search('');
    await page.getByLabel('Role').selectOption('10');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('Page 1 of 1 · 1 users').waitFor();
    assert.deepEqual(await rowNames(page), ['root1']);
    assert.equal(await page.getByRole('button', { name: 'Disable root1' }).isDisabled(), true, 'nobody disables themselves');
    await page.getByLabel('Role').selectOption('');
    await search('zed');
    await zed.waitFor();

    // Disable: Cancel changes nothing; Confirm disables and ends the user's sessions.
    assert.equal((await zedSession.get('/api/user/sessions')).status, 200);
    await page.getByRole('button', { name: 'Disable zed' }).click();
    const dialog = page.getByRole('alertdialog');
    await dialog.getByText('The user can no longer sign in, and all of their sessions end at once.').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/api/user/${ids.zed}`)).json.data.status, USER_STATUS.enabled);
    await page.getByRole('button', { name: 'Disable zed' }).click();
    await dialog.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('zed is disabled; their sessions have ended.').waitFor();
    await zed.locator('[data-col="status"]').getByText('Disabled').waitFor();
    assert.equal((await admin.get(`/api/user/${ids.zed}`)).json.data.status, USER_STATUS.disabled);
    assert.equal((await zedSession.get('/api/user/sessions')).status, 401);
    await screenshot(page, 'account-admin-users');

    // A row opens the per-user tools.
    await page.getByRole('button', { name: 'Manage zed' }).click();
    await page.getByRole('heading', { name: `User ${ids.zed}: zed` }).waitFor();
    await page.locator('section[aria-labelledby="user-title"]').getByRole('button', { name: 'Turn off two-factor' }).waitFor();

    // Chinese: the list, the status and enabling again.
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '全部用户' }).waitFor();
    await page.getByRole('columnheader', { name: '两步验证' }).waitFor();
    await zed.locator('[data-col="status"]').getByText('已禁用').waitFor();
    await page.getByRole('button', { name: '启用 zed' }).click();
    await page.getByText('zed 已可以重新登录。').waitFor();
    assert.equal((await admin.get(`/api/user/${ids.zed}`)).json.data.status, USER_STATUS.enabled);
    await page.getByRole('button', { name: '禁用 zed' }).click();
    await page.getByRole('alertdialog').getByRole('heading', { name: '禁用 zed？' }).waitFor();
    await page.getByRole('alertdialog').getByRole('button', { name: '取消' }).click();
    await screenshot(page, 'account-admin-users-zh');

    // A 390 px phone: the page keeps its width, the table scrolls sideways inside its box.
    await page.setViewportSize({ width: 390, height: 844 });
    await search('', true);
    await page.getByText('第 1/2 页 · 共 14 个用户').waitFor();
    const widths = await page.evaluate(() => {
      const box = document.querySelector('.table-scroll')!;
      return { page: document.documentElement.scrollWidth, box: box.clientWidth, table: box.scrollWidth };
    });
    assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
    assert.ok(widths.table > widths.box, 'the table scrolls inside its box');
    await page.getByRole('button', { name: '下一页' }).click();
    await page.getByText('第 2/2 页 · 共 14 个用户').waitFor();
    await screenshot(page, 'account-admin-users-phone');
    await page.getByRole('button', { name: 'English' }).click();
  } finally {
    await browser.close();
  }
});

test('account console: the sessions page names browser and system, raw string in the tooltip (en + zh)', { skip }, async () => {
  const phone = s.browser();
  const r = await phone.post('/api/user/login', { username: 'user03', password: 'user03 password' }, { 'user-agent': IPHONE });
  assert.equal(r.json.success, true, r.text);
  phone.accessToken = r.json.data.access_token;
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await login(page, 'user03', 'user03 password');
    await page.getByRole('link', { name: 'Login sessions' }).click();
    const current = page.locator('tr[data-current="true"] .ua');
    await current.waitFor();
    assert.match(await current.innerText(), /^Chrome \d+ on Linux$/);
    assert.match((await current.getAttribute('title')) ?? '', /HeadlessChrome\/\d+/);
    const other = page.locator('tr[data-current="false"] .ua');
    assert.equal(await other.innerText(), 'Safari 17 on iPhone');
    assert.equal(await other.getAttribute('title'), IPHONE);
    const listed = (await phone.get('/api/user/sessions')).json.data;
    assert.ok(listed.some((x: any) => x.user_agent === IPHONE), 'the API keeps the raw string');
    await page.getByRole('button', { name: '中文' }).click();
    await page.locator('tr[data-current="false"] .ua').getByText('iPhone 上的 Safari 17').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(pageWidth <= 390, `the sessions page is ${pageWidth} px wide (its table scrolls inside its box)`);
    await screenshot(page, 'account-sessions-ua-phone');
    await page.getByRole('button', { name: 'English' }).click();
  } finally {
    await browser.close();
  }
});
