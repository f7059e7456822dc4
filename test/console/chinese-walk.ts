import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';
import { englishOnPage, pageOverflow } from '../helpers/text-walk.js';
import { ROLE } from '../../src/account/db.js';
import { enrolTotp } from '../account/twofactor-helpers.js';
import { channelTypes } from '../../web/src/generated/gateway-api.js';

// Every page of both consoles in Chinese, signed in as root with data enough for rows in the tables and the
// dialogs: no visible English that is not a name or a code (catalog messages included: the API answers in
// Chinese). The walk runs at a desktop's width in the light theme (chinese-walk-desktop.test.ts) and at a
// phone's width in the dark theme (chinese-walk-phone.test.ts: no page-wide sideways scroll, the dark
// background), one file each so that they run side by side. A new page is one line of PAGES.
let acc: AccountServer;
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
let origin = '';
let targetId = 0;
const skip = browserSkip;
const ROOT_PASSWORD = 'root password 1';

interface WalkPage {
  console: 'account' | 'gateway';
  path: string;
  /** Shown without signing in (login, register, the gateway's token page). */
  signedOut?: boolean;
  /** Waited for before the walk: the page's data is on screen. */
  ready?: string;
  /** Runs on the page before the walk: opens a dialog, shows an error… */
  setup?: (page: Page) => Promise<void>;
  /** Names the screenshots. */
  name: string;
}

const click = (page: Page, text: string) => page.getByRole('button', { name: text, exact: true }).first().click();

const PAGES: WalkPage[] = [
  { console: 'account', path: '/login', signedOut: true, name: 'account-login', setup: async (p) => {
    await p.getByLabel('用户名或邮箱').fill('root');
    await p.getByLabel('密码', { exact: true }).fill('wrong password!');
    await click(p, '登录');
    await p.getByRole('alert').filter({ hasText: 'LOGIN_FAILED' }).waitFor();
  } },
  { console: 'account', path: '/register', signedOut: true, name: 'account-register' },
  { console: 'account', path: '/reset', signedOut: true, name: 'account-reset' },
  { console: 'account', path: '/', name: 'account-security', ready: '[data-testid="twofa-status"]' },
  { console: 'account', path: '/', name: 'account-security-stepup', ready: '[data-testid="twofa-status"]', setup: async (p) => {
    await click(p, '设置两步验证');
    await p.getByRole('dialog').waitFor();
  } },
  { console: 'account', path: '/sessions', name: 'account-sessions', ready: 'tbody tr' },
  { console: 'account', path: '/admin/users', name: 'account-admin-users', ready: '.figures', setup: async (p) => {
    await p.getByLabel('用户 ID').fill(String(targetId));
    await click(p, '打开');
    await p.locator('li[data-provider="github"]').waitFor();
  } },
  { console: 'gateway', path: '/', signedOut: true, name: 'gateway-sign-in', setup: async (p) => {
    await p.getByLabel('员工令牌').fill('gwst_not-a-token');
    await click(p, '登录');
    await p.getByRole('alert').filter({ hasText: 'GW_UNAUTHORIZED' }).waitFor();
  } },
  { console: 'gateway', path: '/', name: 'gateway-channels', ready: 'tbody tr[data-id]' },
  { console: 'gateway', path: '/', name: 'gateway-channel-new', ready: 'tbody tr[data-id]', setup: async (p) => {
    await click(p, '新建渠道');
    await p.getByRole('dialog').waitFor();
  } },
  { console: 'gateway', path: '/', name: 'gateway-channel-edit', ready: 'tbody tr[data-id]', setup: async (p) => {
    await p.locator('tbody tr[data-id]').first().getByRole('button', { name: '编辑', exact: true }).click();
    await p.getByRole('dialog').waitFor();
  } },
  { console: 'gateway', path: '/', name: 'gateway-channel-keys', ready: 'tbody tr[data-id]', setup: async (p) => {
    await p.locator('tbody tr[data-id]').filter({ hasText: 'multi' }).getByRole('button', { name: '密钥管理' }).click();
    await p.getByRole('dialog').locator('tbody tr').first().waitFor();
  } },
  { console: 'gateway', path: '/', name: 'gateway-channel-tags', ready: 'tbody tr[data-id]', setup: async (p) => {
    await p.getByLabel('按标签聚合').check();
    await click(p, '搜索');
    await p.locator('tr.tag-row').first().waitFor();
  } },
  { console: 'gateway', path: '/operations', name: 'gateway-operations', ready: 'section.card' },
  { console: 'gateway', path: '/deployments', name: 'gateway-deployments', ready: 'tbody tr[data-id]' },
  { console: 'gateway', path: '/deployments', name: 'gateway-deployment-new', ready: 'tbody tr[data-id]', setup: async (p) => {
    await click(p, '新建部署');
    await p.getByRole('dialog').locator('select option').nth(1).waitFor({ state: 'attached' });
  } },
  { console: 'gateway', path: '/staff', name: 'gateway-staff', ready: 'main section.card' },
  { console: 'gateway', path: '/audit', name: 'gateway-audit', ready: 'main section.card' },
  { console: 'gateway', path: '/settings', name: 'gateway-settings', ready: 'main section.card' },
  { console: 'gateway', path: '/edge', name: 'gateway-edge', ready: '[data-testid="edge-not-served"]' },
  { console: 'gateway', path: '/relay-log', name: 'gateway-relay', ready: 'table.relay-log tbody tr[data-id]', setup: async (p) => {
    await p.locator('button.expander').first().click();
    await p.locator('tr.attempts').first().waitFor();
    await p.locator('figure.chart canvas').first().waitFor();
  } },
];

/** Names and models this test created, and channel type names: shown as they are in any language. */
const NAMES = ['new-api', 'root', 'tess', 'alpha', 'broken', 'multi', 'team-a', 'gpt-4o', 'claude-x', 'default', 'edge:acme', 'acme', 'Germany', 'DE', 'NVIDIA', 'H100', ...Object.values(channelTypes).map((c) => c.name)];
/** Product names and a term Chinese interfaces keep (Coder, Webhook), and the fake upstream's own words, which staff see as it sent them. */
const KEPT = ['Coder', 'Webhook', 'upstream exploded'];
/** The sessions' user agents (the browser's, and node's for the session the API opened), and their names. */
const AGENTS = ['node', 'Node.js', 'Chrome', 'Linux'];

async function setUp() {
  if (skip) return;
  acc = await startAccount({ name: 'sqlite' }, { env: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: 'http://localhost', GITHUB_CLIENT_ID: 'gh-client', GITHUB_CLIENT_SECRET: 'gh-secret-value' } });
  origin = acc.url.replace('127.0.0.1', 'localhost');
  acc.ctx.config.passkey.origins.splice(0, Infinity, origin);
  await acc.createUser('root', ROOT_PASSWORD, { role: ROLE.root });
  targetId = await acc.createUser('tess', 'tess password 1');
  await enrolTotp(acc, 'tess', 'tess password 1');
  await (acc.ctx.database.db as any).updateTable('users').set({ github_id: 'gh-77', telegram_id: '7070' }).where('id', '=', targetId).execute();
  await acc.browser().login('root', ROOT_PASSWORD); // a second session in the list

  up = await startFakeUpstream({
    'POST /ok/v1/chat/completions': (r, res) => sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: r.json.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }),
    'POST /broken/v1/chat/completions': (_r, res) => sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } }),
    'GET /caas/deployments': (_r, res) => sendJson(res, 200, { data: { deployments: [{ id: 'd1', name: 'alpha', status: 'Running', hardware_quantity: 1, brand_name: 'NVIDIA', hardware_name: 'H100', compute_minutes_remaining: 90, created_at: '2026-01-01T00:00:00Z' }], total: 1 } }),
    'GET /caas/hardware/max-gpus-per-container': (_r, res) => sendJson(res, 200, { data: { hardware: [{ hardware_id: 7, hardware_name: 'H100', brand_name: 'NVIDIA', max_gpus_per_container: 8, available: 5 }], total: 5 } }),
    'GET /caas/locations': (_r, res) => sendJson(res, 200, { data: { locations: [{ id: 3, name: 'Germany', iso2: 'de', available: 4 }], total: 4 } }),
  });
  gw = await startGateway({ name: 'sqlite' }, { env: { ...RELAY_ENV, GATEWAY_IONET_BASE_URL: up.url + '/caas' } });
  root = await gw.staff('root', 'root');
  await gw.services.ratios.setCurrent({ model_ratio: { 'gpt-4o': 1.25, 'claude-x': 1 }, completion_ratio: { 'gpt-4o': 4 } });
  const channel = async (fields: Record<string, unknown>, mode = 'single') => {
    const r = await root.post('/api/channel/', { mode, channel: { type: 1, group: 'default', ...fields } });
    assert.equal(r.status, 200, r.text);
  };
  await channel({ name: 'alpha', base_url: `${up.url}/ok`, key: 'sk-alpha-0123456789', models: 'gpt-4o', tag: 'team-a' });
  await channel({ name: 'broken', base_url: `${up.url}/broken`, key: 'sk-broken-0123456789', models: 'gpt-4o,claude-x', priority: 10, tag: 'team-a' });
  await channel({ name: 'multi', base_url: `${up.url}/ok`, key: 'sk-multi-1\nsk-multi-2', models: 'gpt-4o' }, 'multi_to_single');
  assert.equal((await relay(gw.url, '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
  assert.equal((await relay(gw.url, '/chat/completions', { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] })).status, 500);
  await gw.relay.log.flush();
  await gw.services.deployments.setSettings({ apiKey: 'ionet-walk-key-0123456789', enabled: true });
}

async function tearDown() {
  if (skip) return;
  await acc.close();
  await gw.close();
  await up.close();
}

export interface Variant {
  name: string;
  width: number;
  colorScheme: 'light' | 'dark';
}

async function contexts(browser: Browser, v: Variant) {
  const make = async (staffToken?: string) => {
    const c = await browser.newContext({ viewport: { width: v.width, height: 900 }, colorScheme: v.colorScheme, locale: 'zh-CN' });
    await c.addInitScript((token) => {
      localStorage.setItem('console.lang', 'zh');
      if (token) sessionStorage.setItem('console.staff_token', token);
    }, staffToken ?? '');
    return c;
  };
  const signedIn = await make();
  const page = await signedIn.newPage();
  page.setDefaultTimeout(10_000);
  AGENTS.push(String(await page.evaluate('navigator.userAgent')));
  await page.goto(origin + '/login');
  await page.getByLabel('用户名或邮箱').fill('root');
  await page.getByLabel('密码', { exact: true }).fill(ROOT_PASSWORD);
  await click(page, '登录');
  await page.locator('[data-testid="twofa-status"]').waitFor();
  await page.close();
  return { signedIn, signedOut: await make(), staff: await make(root.token!), staffOut: await make() };
}

async function walk(browser: Browser, v: Variant) {
  const c = await contexts(browser, v);
  const problems: string[] = [];
  try {
    for (const p of PAGES) {
      const context: BrowserContext = p.console === 'account' ? (p.signedOut ? c.signedOut : c.signedIn) : p.signedOut ? c.staffOut : c.staff;
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('dialog', (d) => void d.dismiss());
      try {
        await page.goto((p.console === 'account' ? origin : gw.url) + p.path);
        if (p.ready) await page.locator(p.ready).first().waitFor();
        await p.setup?.(page);
        await page.waitForLoadState('networkidle');
        assert.equal(await page.evaluate('document.documentElement.lang'), 'zh-CN', `${p.name}: <html lang>`);
        for (const line of await englishOnPage(page, [...NAMES, ...KEPT, ...AGENTS])) problems.push(`${v.name} ${p.name}: ${line}`);
        if (v.width <= 390) {
          const { scrollWidth } = await pageOverflow(page);
          if (scrollWidth > v.width) problems.push(`${v.name} ${p.name}: the page is ${scrollWidth} px wide`);
        }
        if (v.colorScheme === 'dark') {
          const bg = await page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
          if (bg !== 'rgb(15, 18, 24)') problems.push(`${v.name} ${p.name}: background ${bg} is not the dark theme's`);
        }
        await screenshot(page, `walk-${v.name}-${p.name}`);
      } catch (e) {
        problems.push(`${v.name} ${p.name}: ${(e as Error).message.split('\n')[0]}`);
        await screenshot(page, `walk-${v.name}-${p.name}-failed`).catch(() => {});
      } finally {
        await page.close();
      }
    }
  } finally {
    for (const ctx of Object.values(c)) await ctx.close();
  }
  return problems;
}

/** Registers the set-up and the walk of one variant in the calling test file. */
export function walkInChinese(v: Variant) {
  before(setUp);
  after(tearDown);
  test(`every console page in Chinese (${v.name}): no English left but names and codes`, { skip }, async () => {
    const browser = await launch();
    try {
      const problems = await walk(browser, v);
      assert.deepEqual(problems, [], `\n${problems.join('\n')}`);
    } finally {
      await browser.close();
    }
  });
}
