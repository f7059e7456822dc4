import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The channel table with long channel names, at 1280 px and 390 px, in English and Chinese: the name is cut
// short with the full name in its title and never runs over the ID, type and status columns; the row's
// actions stay on screen (sticky at the right edge) and work (read back through the API).
let gw: GatewayServer;
let root: StaffClient;
const skip = browserSkip;
const LONG = 'openai-production-east-primary-account-with-a-very-long-descriptive-name-for-billing-team-42';
const SPACED = 'OpenAI production east primary account with a very long descriptive name for the billing team';
const ids: number[] = [];

before(async () => {
  if (skip) return;
  gw = await startGateway({ name: 'sqlite' });
  root = await gw.staff('ops', 'root');
  for (const name of [LONG, SPACED, 'short']) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { name, type: 1, key: `sk-${ids.length}`, models: 'gpt-4o', group: 'default' } });
    assert.equal(r.status, 200, r.text);
    ids.push(r.json.data.ids[0]);
  }
});

after(async () => {
  if (!skip) await gw.close();
});

type Box = { x: number; y: number; width: number; height: number };
const box = async (page: Page, selector: string): Promise<Box> => {
  const b = await page.locator(selector).first().boundingBox();
  assert.ok(b, `${selector} has a box`);
  return b;
};

/** The name's visible text ends before the ID column starts; every action button is inside the viewport. */
async function checkRow(page: Page, id: number, full: string, what: string) {
  const row = `tr[data-id="${id}"]`;
  await page.locator(`${row} > th.name-cell`).evaluate((el) => el.scrollIntoView({ block: 'center', inline: 'nearest' }));
  const name = page.locator(`${row} .name-text`);
  assert.equal(await name.getAttribute('title'), full, `${what}: the full name is the tooltip`);
  const text = await box(page, `${row} .name-text`);
  const cell = await box(page, `${row} > th.name-cell`);
  const idCell = await box(page, `${row} > td.col-id`);
  assert.ok(text.x + text.width <= cell.x + cell.width + 0.5, `${what}: the name stays inside its cell (${text.x + text.width} > ${cell.x + cell.width})`);
  assert.ok(cell.x + cell.width <= idCell.x + 0.5, `${what}: the name cell ends before the ID column (${cell.x + cell.width} > ${idCell.x})`);
  const cut = await name.evaluate((el) => el.scrollWidth > el.clientWidth);
  assert.ok(cut, `${what}: a long name is truncated`);
  const viewport = page.viewportSize()!;
  for (const button of await page.locator(`${row} .actions button`).all()) {
    const b = await button.boundingBox();
    assert.ok(b, `${what}: an action has a box`);
    assert.ok(b.x >= 0 && b.x + b.width <= viewport.width, `${what}: action "${await button.innerText()}" is on screen (${b.x}..${b.x + b.width} of ${viewport.width})`);
    // Nothing covers it: the topmost element at its centre is the button itself.
    const top = await page.evaluate(([x, y]) => document.elementFromPoint(x!, y!)?.closest('button')?.textContent ?? null, [b.x + b.width / 2, b.y + b.height / 2]);
    assert.equal(top, await button.innerText(), `${what}: action "${await button.innerText()}" is not covered`);
  }
}

test('gateway console channels: a long name is cut with a tooltip, the actions stay on screen; 1280 px and 390 px, EN and ZH', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    await page.getByText('Page 1 · 3 in all').waitFor();
    await checkRow(page, ids[0]!, LONG, '1280 px EN, unbroken name');
    await checkRow(page, ids[1]!, SPACED, '1280 px EN, name with spaces');
    await screenshot(page, 'gateway-channels-long-names');

    // An action of the long-named row works from where it sits.
    await page.locator(`tr[data-id="${ids[0]}"]`).getByRole('button', { name: 'Disable' }).click();
    await page.locator(`tr[data-id="${ids[0]}"]`).getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await root.get(`/api/channel/${ids[0]}`)).json.data.status, 2);

    await page.getByRole('button', { name: '中文' }).click();
    await page.getByText('第 1 页 · 共 3 条').waitFor();
    await checkRow(page, ids[0]!, LONG, '1280 px ZH');
    await screenshot(page, 'gateway-channels-long-names-zh');
    await page.locator(`tr[data-id="${ids[0]}"]`).getByRole('button', { name: '启用' }).click();
    await page.locator(`tr[data-id="${ids[0]}"]`).getByRole('button', { name: '禁用' }).waitFor();
    assert.equal((await root.get(`/api/channel/${ids[0]}`)).json.data.status, 1);

    await page.setViewportSize({ width: 390, height: 844 });
    await checkRow(page, ids[0]!, LONG, '390 px ZH');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `390 px: the page is ${width} px wide`);
    await screenshot(page, 'gateway-channels-long-names-phone-zh');
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByText('Page 1 · 3 in all').waitFor();
    await checkRow(page, ids[1]!, SPACED, '390 px EN');
    await screenshot(page, 'gateway-channels-long-names-phone');
  } finally {
    await browser.close();
  }
});
