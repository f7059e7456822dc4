import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import { englishOnPage, pageOverflow, visibleTexts } from '../helpers/text-walk.js';
import { chat, startCustomerStack, type CustomerStack } from '../account/customers/stack.js';

// The account console's customer and admin pages (keys, wallet, usage, pricing, playground, profile; users,
// top-up codes, every user's usage), each with data in its tables and its dialogs open, walked in English and
// in Chinese: no Chinese left on an English page, no English on a Chinese one but names and codes, no
// page-wide sideways scroll at a phone's width, the dark background in the dark theme. One variant per file
// (account-pages-walk-desktop.test.ts: 1280 px light, Chinese — the English desktop is the functional tests';
// -phone: 390 px dark, both languages) so that they run side by side.
const skip = browserSkip;
let c: CustomerStack;

export interface Variant {
  name: string;
  width: number;
  colorScheme: 'light' | 'dark';
}

interface WalkPage {
  path: string;
  as: 'cora' | 'boss';
  name: string;
  /** Waited for before the walk: the page's data is on screen. */
  ready: string;
  /** Opens a dialog, a panel… (texts by language: `zh` says which). */
  setup?: (page: Page, zh: boolean) => Promise<void>;
}

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true }).first().click();

const PAGES: WalkPage[] = [
  { path: '/keys', as: 'cora', name: 'keys', ready: 'table.keys tbody tr' },
  { path: '/keys', as: 'cora', name: 'key-form', ready: 'table.keys tbody tr', setup: async (p, zh) => {
    await button(p, zh ? '新建密钥' : 'New key');
    await p.getByRole('dialog').getByLabel(zh ? '仅限以下模型' : 'Only these models').check();
    await p.getByRole('dialog').getByLabel(zh ? '有效期' : 'Expires').selectOption('custom');
  } },
  { path: '/keys', as: 'cora', name: 'key-shown', ready: 'table.keys tbody tr', setup: async (p, zh) => {
    await button(p, zh ? '新建密钥' : 'New key');
    await p.getByRole('dialog').getByLabel(zh ? '名称' : 'Name').fill('walk');
    await button(p, zh ? '创建密钥' : 'Create key');
    await p.getByTestId('new-key').waitFor();
  } },
  { path: '/wallet', as: 'cora', name: 'wallet', ready: 'table.history tbody tr' },
  { path: '/usage', as: 'cora', name: 'usage', ready: 'table.call-log tbody tr', setup: async (p) => void (await p.locator('figure.chart canvas').first().waitFor()) },
  { path: '/pricing', as: 'cora', name: 'pricing', ready: 'table.prices tbody tr' },
  { path: '/playground', as: 'cora', name: 'playground', ready: 'select[name="model"] option', setup: async (p, zh) => {
    await p.getByLabel(zh ? '消息' : 'Message').fill('Hi');
    await button(p, zh ? '发送' : 'Send');
    await p.getByTestId('pg-usage').waitFor();
  } },
  { path: '/profile', as: 'cora', name: 'profile', ready: '[data-testid="pf-username"]' },
  { path: '/admin/users', as: 'boss', name: 'admin-users', ready: 'table.user-list tbody tr', setup: async (p, zh) => {
    await p.locator('tr[data-user="cora"]').getByRole('button', { name: zh ? '管理 cora' : 'Manage cora' }).click();
    await p.locator('[data-user-panel="cora"] .balance-form').waitFor();
  } },
  { path: '/admin/users', as: 'boss', name: 'admin-new-user', ready: 'table.user-list tbody tr', setup: async (p, zh) => {
    await button(p, zh ? '新建用户' : 'New user');
    await p.getByRole('dialog').waitFor();
  } },
  { path: '/admin/codes', as: 'boss', name: 'admin-codes', ready: 'table.codes-table tbody tr' },
  { path: '/admin/codes', as: 'boss', name: 'admin-codes-shown', ready: 'table.codes-table tbody tr', setup: async (p, zh) => {
    await button(p, zh ? '新建充值码' : 'New codes');
    const d = p.getByRole('dialog');
    await d.getByLabel(zh ? '名称' : 'Name').fill('walk');
    await d.getByLabel(zh ? '每个充值码的金额（USD）' : 'Amount of each code in USD').fill('1');
    await button(p, zh ? '创建充值码' : 'Create codes');
    await p.getByTestId('new-codes').waitFor();
  } },
  { path: '/admin/usage', as: 'boss', name: 'admin-usage', ready: 'table.call-log tbody tr', setup: async (p) => void (await p.locator('[data-testid="by-user"] tbody tr').first().waitFor()) },
];

/** Names, models and data the set-up created, and the clients the snippets name: shown as they are in any language. */
export const NAMES = ['cora', 'boss', 'sdk', 'walk', 'playground-default', 'gift', 'gpt-4o', 'default', 'curl', 'OpenAI SDK (Python)', 'OpenAI SDK (Node.js)', 'Claude Code / Anthropic SDK', 'test credit', 'Hi', 'Hello there', 'root'];

async function setUp() {
  if (!skip) c = await startWalkStack();
}

/** The stack the walks run on: cora with a key, a call, a redeemed code and balance; boss, the root admin. */
export async function startWalkStack(): Promise<CustomerStack> {
  const c = await startCustomerStack({ name: 'sqlite' });
  const cora = await c.customer('cora');
  assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: cora.id, quota: 5_000_000, reason: 'test credit' } })).json.success, true);
  const key = (await cora.b.post('/api/token/', { name: 'sdk', unlimited_quota: true, model_limits_enabled: true, model_limits: 'gpt-4o' })).json.data.key;
  assert.equal((await chat(c.st, key)).status, 200);
  const [code] = (await c.root.post('/api/redemption/', { name: 'gift', quota: 500_000, count: 2 })).json.data;
  assert.equal((await cora.b.post('/api/user/topup', { key: code })).json.success, true);
  return c;
}

/** A browser context of `user` signed in to the console at `url` (the page used to sign in is closed). */
export async function signedIn(browser: Browser, url: string, v: Variant, zh: boolean, user: 'cora' | 'boss') {
  const context = await browser.newContext({ viewport: { width: v.width, height: 900 }, colorScheme: v.colorScheme, locale: zh ? 'zh-CN' : 'en-US' });
  await context.addInitScript((lang) => localStorage.setItem('console.lang', lang), zh ? 'zh' : 'en');
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(url + '/login');
  await page.getByLabel(zh ? '用户名或邮箱' : 'Username or email').fill(user);
  await page.getByLabel(zh ? '密码' : 'Password', { exact: true }).fill(`${user} password 1`);
  await button(page, zh ? '登录' : 'Log in');
  await page.getByText(zh ? `已登录：${user}` : `Signed in as ${user}`).waitFor();
  await page.close();
  return context;
}

/** Visible texts with Chinese characters on a page shown in English (the catalog answers in English too). */
export async function chineseOnPage(page: Page): Promise<string[]> {
  return (await visibleTexts(page)).filter((x) => x.text !== 'Language / 语言' && x.text !== '中文' && /[\u4e00-\u9fff]/.test(x.text)).map((x) => `${x.where}: ${JSON.stringify(x.text)}`);
}

/** Client-side navigation in the console (no reload: the page, its session and its assets stay). */
export async function go(page: Page, path: string) {
  await page.evaluate((to) => {
    history.pushState(null, '', to);
    dispatchEvent(new PopStateEvent('popstate'));
  }, path);
}

async function walk(browser: Browser, v: Variant, zh: boolean) {
  const contexts: Record<string, BrowserContext> = { cora: await signedIn(browser, c.account.url, v, zh, 'cora'), boss: await signedIn(browser, c.account.url, v, zh, 'boss') };
  const pages: Record<string, Page> = {};
  for (const [who, context] of Object.entries(contexts)) {
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(c.account.url + '/sessions');
    await page.locator('tbody tr').first().waitFor();
    pages[who] = page;
  }
  const label = `${v.name}-${zh ? 'zh' : 'en'}`;
  const problems: string[] = [];
  try {
    const last: Record<string, string> = {};
    for (const p of PAGES) {
      const page = pages[p.as]!;
      try {
        // A fresh page: dialogs closed; the same path again goes through the sessions page to start anew.
        await page.keyboard.press('Escape');
        if (last[p.as] === p.path) {
          await go(page, '/sessions');
          await page.locator('tbody tr[data-sid]').first().waitFor();
        }
        last[p.as] = p.path;
        await go(page, p.path);
        await page.locator(p.ready).first().waitFor({ state: 'attached' });
        await p.setup?.(page, zh);
        const left = zh ? await englishOnPage(page, NAMES) : await chineseOnPage(page);
        for (const line of left) problems.push(`${label} ${p.name}: ${line}`);
        if (v.width <= 390) {
          const { scrollWidth } = await pageOverflow(page);
          if (scrollWidth > v.width) problems.push(`${label} ${p.name}: the page is ${scrollWidth} px wide`);
        }
        if (v.colorScheme === 'dark') {
          const bg = await page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
          if (bg !== 'rgb(15, 18, 24)') problems.push(`${label} ${p.name}: background ${bg} is not the dark theme's`);
        }
        if (zh) await screenshot(page, `account-walk-${label}-${p.name}`);
      } catch (e) {
        problems.push(`${label} ${p.name}: ${(e as Error).message.split('\n')[0]}`);
        await screenshot(page, `account-walk-${label}-${p.name}-failed`).catch(() => {});
      }
    }
  } finally {
    for (const context of Object.values(contexts)) await context.close();
  }
  return problems;
}

/** Registers the set-up and the walk of one variant in the calling test file, in Chinese and (`english`) in English. */
export function walkAccountPages(v: Variant, opts: { english: boolean }) {
  before(setUp);
  after(async () => {
    if (!skip) await c.close();
  });
  test(`account console customer and admin pages (${v.name}, ${opts.english ? 'English and ' : ''}Chinese): texts, width, theme`, { skip }, async () => {
    const browser = await launch();
    try {
      const problems = [...(opts.english ? await walk(browser, v, false) : []), ...(await walk(browser, v, true))];
      assert.deepEqual(problems, [], `\n${problems.join('\n')}`);
    } finally {
      await browser.close();
    }
  });
}
