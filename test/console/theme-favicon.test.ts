import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';

// What both consoles share: the favicon (an SVG asset the static server serves), <html lang> from the first
// paint (server-side from Accept-Language, then the reader's stored choice), and the theme switch in the
// header (system by default, light or dark kept in localStorage; colours and color-scheme follow).
let acc: AccountServer;
let gw: GatewayServer;
const skip = browserSkip;
const LIGHT_BG = 'rgb(245, 246, 248)';
const DARK_BG = 'rgb(15, 18, 24)';

before(async () => {
  if (skip) return;
  acc = await startAccount({ name: 'sqlite' });
  gw = await startGateway({ name: 'sqlite' });
});

after(async () => {
  if (skip) return;
  await acc.close();
  await gw.close();
});

const urls = () => ({ account: acc.url, gateway: gw.url });

test('both consoles link an SVG favicon that the static server serves as image/svg+xml', { skip }, async () => {
  for (const [name, url] of Object.entries(urls())) {
    const page = await (await fetch(url + '/', { headers: { accept: 'text/html' } })).text();
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/.exec(page)?.[1];
    assert.ok(href, `${name}: the page links its icon`);
    assert.match(href, /^\/assets\/favicon-[\w-]+\.svg$/, 'under the hashed assets, from the root the app is served at');
    const icon = await fetch(new URL(href, url + '/'));
    assert.equal(icon.status, 200, name);
    assert.equal(icon.headers.get('content-type'), 'image/svg+xml');
    assert.match(icon.headers.get('cache-control')!, /immutable/);
    assert.match(await icon.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  }
});

test('<html lang> is the reader language in the page as served: zh-CN for a Chinese browser, en otherwise', { skip }, async () => {
  for (const [name, url] of Object.entries(urls())) {
    const lang = async (accept: string) => /<html lang="([^"]+)">/.exec(await (await fetch(url + '/', { headers: { accept: 'text/html', 'accept-language': accept } })).text())?.[1];
    assert.equal(await lang('zh-CN,zh;q=0.9,en;q=0.8'), 'zh-CN', name);
    assert.equal(await lang('zh-TW'), 'zh-CN', name);
    assert.equal(await lang('en-US,en;q=0.9,zh;q=0.5'), 'en', name);
    assert.equal(await lang(''), 'en', name);
  }
});

const state = (page: Page) =>
  page.evaluate(`({
    lang: document.documentElement.lang,
    theme: document.documentElement.dataset.theme ?? null,
    stored: localStorage.getItem('console.theme'),
    bg: getComputedStyle(document.documentElement).backgroundColor,
    scheme: getComputedStyle(document.documentElement).colorScheme,
    input: getComputedStyle(document.querySelector('input')).backgroundColor,
  })`) as Promise<{ lang: string; theme: string | null; stored: string | null; bg: string; scheme: string; input: string }>;

async function open(browser: Browser, url: string, colorScheme: 'light' | 'dark', lang: 'en' | 'zh') {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 }, colorScheme, locale: lang === 'zh' ? 'zh-CN' : 'en-US' });
  // The stored language differs from the browser's here: the page must take the stored one before any switch.
  await context.addInitScript((l) => localStorage.setItem('console.lang', l), lang === 'zh' ? 'en' : 'zh');
  const page = await context.newPage();
  await page.goto(url);
  await page.locator('select.theme-switch').waitFor();
  return page;
}

test('theme switch in both headers: system by default, light or dark remembered; <html lang> from the first paint', { skip }, async () => {
  const browser = await launch();
  try {
    // Account console, system light, stored language zh (the browser says English).
    const page = await open(browser, acc.url + '/login', 'light', 'en');
    let s = await state(page);
    assert.equal(s.lang, 'zh-CN', 'the stored language, without a click on the switch');
    assert.deepEqual([s.theme, s.stored, s.bg, s.scheme], [null, null, LIGHT_BG, 'light']);
    const sw = page.getByRole('combobox', { name: '主题' });
    assert.equal(await sw.inputValue(), 'system');
    assert.deepEqual(await sw.locator('option').allInnerTexts(), ['跟随系统', '浅色', '深色']);
    await sw.selectOption('dark');
    s = await state(page);
    assert.deepEqual([s.theme, s.stored, s.bg, s.scheme], ['dark', 'dark', DARK_BG, 'dark']);
    assert.notEqual(s.input, 'rgb(255, 255, 255)', 'form fields follow the theme');
    await screenshot(page, 'theme-account-login-dark');
    await page.reload();
    await page.locator('select.theme-switch').waitFor();
    s = await state(page);
    assert.deepEqual([s.theme, s.bg], ['dark', DARK_BG], 'the choice outlives a reload');
    await page.getByRole('combobox', { name: '主题' }).selectOption('system');
    s = await state(page);
    assert.deepEqual([s.theme, s.stored, s.bg], [null, null, LIGHT_BG]);

    // Gateway console, system dark, stored language en (the browser says Chinese).
    const gpage = await open(browser, gw.url + '/', 'dark', 'zh');
    s = await state(gpage);
    assert.equal(s.lang, 'en');
    assert.deepEqual([s.theme, s.bg, s.scheme], [null, DARK_BG, 'dark'], 'the system preference by default');
    await screenshot(gpage, 'theme-gateway-sign-in-system-dark');
    await gpage.getByRole('combobox', { name: 'Theme' }).selectOption('light');
    s = await state(gpage);
    assert.deepEqual([s.theme, s.stored, s.bg, s.scheme], ['light', 'light', LIGHT_BG, 'light']);
    // Switching the language keeps <html lang> in step.
    await gpage.getByRole('button', { name: '中文' }).click();
    assert.equal((await state(gpage)).lang, 'zh-CN');
  } finally {
    await browser.close();
  }
});
