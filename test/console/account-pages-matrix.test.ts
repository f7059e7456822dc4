import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import { lowContrastTexts } from '../helpers/contrast.js';
import { englishOnPage, pageOverflow } from '../helpers/text-walk.js';
import type { CustomerStack } from '../account/customers/stack.js';
import { chineseOnPage, go, NAMES, signedIn, startWalkStack } from './account-pages-walk.js';

// Every customer and admin page of the account console in all eight combinations of 1280 px and 390 px,
// English and Chinese, light and dark: no page-wide sideways scroll on a phone, no text of the other language,
// every visible text readable against what is behind it (WCAG AA's 4.5:1), and nothing in the browser's console
// (a script error, a failed request). One browser; one page per user, its window, colour scheme and language
// switched in place. The dialogs are walked in account-pages-walk*.test.ts.
const skip = browserSkip;
let c: CustomerStack;
/** WCAG AA's contrast for body text. */
const MIN_CONTRAST = 4.5;

interface MatrixPage {
  path: string;
  as: 'cora' | 'boss';
  name: string;
  /** Waited for: the page's data is on screen. */
  ready: string;
  /** Opens a panel (texts by language: `zh` says which). */
  setup?: (page: Page, zh: boolean) => Promise<void>;
}

const PAGES: MatrixPage[] = [
  { path: '/keys', as: 'cora', name: 'keys', ready: 'table.keys tbody tr' },
  { path: '/wallet', as: 'cora', name: 'wallet', ready: 'table.history tbody tr' },
  { path: '/usage', as: 'cora', name: 'usage', ready: 'table.call-log tbody tr', setup: async (p) => void (await p.locator('figure.chart canvas').first().waitFor()) },
  { path: '/pricing', as: 'cora', name: 'pricing', ready: 'table.prices tbody tr' },
  { path: '/playground', as: 'cora', name: 'playground', ready: 'select[name="model"] option' },
  { path: '/profile', as: 'cora', name: 'profile', ready: '[data-testid="pf-username"]' },
  { path: '/', as: 'cora', name: 'security', ready: '[data-testid="twofa-status"]' },
  { path: '/sessions', as: 'cora', name: 'sessions', ready: 'tbody tr[data-sid]' },
  { path: '/admin/users', as: 'boss', name: 'admin-users', ready: 'table.user-list tbody tr', setup: async (p, zh) => {
    await p.locator('tr[data-user="cora"]').getByRole('button', { name: zh ? '管理 cora' : 'Manage cora' }).click();
    await p.locator('[data-user-panel="cora"] .balance-form').waitFor();
  } },
  { path: '/admin/codes', as: 'boss', name: 'admin-codes', ready: 'table.codes-table tbody tr' },
  { path: '/admin/usage', as: 'boss', name: 'admin-usage', ready: 'table.call-log tbody tr', setup: async (p) => void (await p.locator('[data-testid="by-user"] tbody tr').first().waitFor()) },
  { path: '/sessions', as: 'boss', name: 'admin-sessions', ready: 'tbody tr[data-sid]' },
];

/** The page's background in each theme (--bg). */
const BACKGROUND = { light: 'rgb(245, 246, 248)', dark: 'rgb(15, 18, 24)' };
const COMBINATIONS = [1280, 390].flatMap((width) => (['en', 'zh'] as const).flatMap((lang) => (['light', 'dark'] as const).map((theme) => ({ width, lang, theme }))));

before(async () => {
  if (!skip) c = await startWalkStack();
});
after(async () => {
  if (!skip) await c.close();
});

test('account console: every customer and admin page at 1280 and 390 px, in English and Chinese, light and dark', { skip }, async () => {
  const browser = await launch();
  const problems: string[] = [];
  try {
    const start = { name: 'start', width: 1280, colorScheme: 'light' as const };
    const pages: Record<string, Page> = {};
    // The sessions list names the browsers and clients as they call themselves (the test's HTTP client is node).
    const names = [...NAMES, 'node', 'Node.js', 'Chrome', 'Linux'];
    // What the browser's console says, charged to the page on screen.
    let current = 'sign-in';
    for (const who of ['cora', 'boss'] as const) {
      const page = await (await signedIn(browser, c.account.url, start, false, who)).newPage();
      page.setDefaultTimeout(10_000);
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`${current}: console error ${JSON.stringify(m.text())} ${m.location().url}`);
      });
      page.on('pageerror', (e) => problems.push(`${current}: script error ${e.message}`));
      await page.goto(c.account.url + '/sessions');
      await page.locator('tbody tr[data-sid]').first().waitFor();
      names.push(String(await page.evaluate('navigator.userAgent')));
      pages[who] = page;
    }
    // The contrast check sees what it looks for: a planted grey-on-grey text is reported.
    // (Styled through the CSSOM: the console's CSP refuses style attributes.)
    const planted = `Object.assign(document.body.appendChild(document.createElement('p')), { id: 'planted', textContent: 'planted' }).style.cssText = 'color:#777;background:#888'`;
    await pages.cora!.evaluate(planted);
    assert.ok((await lowContrastTexts(pages.cora!, MIN_CONTRAST)).some((l) => l.where.includes('"planted"')), 'the contrast check finds grey on grey');
    await pages.cora!.evaluate(`document.getElementById('planted').remove()`);
    for (const combo of COMBINATIONS) {
      const zh = combo.lang === 'zh';
      for (const page of Object.values(pages)) {
        await page.setViewportSize({ width: combo.width, height: 900 });
        await page.emulateMedia({ colorScheme: combo.theme });
        await page.getByRole('button', { name: zh ? '中文' : 'English', exact: true }).click();
      }
      for (const p of PAGES) {
        const label = `${combo.width}-${combo.lang}-${combo.theme} ${p.name}`;
        current = label;
        const page = pages[p.as]!;
        try {
          await go(page, p.path);
          await page.locator(p.ready).first().waitFor({ state: 'attached' });
          await p.setup?.(page, zh);
          const shown = await page.evaluate('[document.documentElement.lang, getComputedStyle(document.documentElement).backgroundColor]');
          assert.deepEqual(shown, [zh ? 'zh-CN' : 'en', BACKGROUND[combo.theme]], 'the language and theme in effect');
          const otherLanguage = zh ? await englishOnPage(page, names) : await chineseOnPage(page);
          for (const line of otherLanguage) problems.push(`${label}: ${line}`);
          const { scrollWidth } = await pageOverflow(page);
          if (scrollWidth > combo.width) problems.push(`${label}: the page is ${scrollWidth} px wide`);
          for (const low of await lowContrastTexts(page, MIN_CONTRAST)) problems.push(`${label}: contrast ${low.ratio} of ${low.where} (${low.color} on ${low.background})`);
        } catch (e) {
          problems.push(`${label}: ${(e as Error).message.split('\n')[0]}`);
          await screenshot(page, `account-matrix-${label.replace(' ', '-')}-failed`).catch(() => {});
        }
      }
    }
  } finally {
    await browser.close();
  }
  assert.deepEqual(problems, [], `\n${problems.join('\n')}`);
});
