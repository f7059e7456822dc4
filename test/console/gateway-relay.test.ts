import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';
import { sendJson, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';

// The relay page of the gateway console (GS04 log, GS05 usage) after real relay calls through a fake
// upstream: a call that failed over from a broken channel to a working one (its model mapped), and a call
// that failed. The rows, a filter, a row's attempts, the usage chart, Chinese texts and a phone's width.
let gw: GatewayServer;
let up: FakeUpstream;
let root: StaffClient;
const skip = browserSkip;
const PRICES = { model_ratio: { 'gpt-4o': 1.25, 'claude-x': 1 }, completion_ratio: { 'gpt-4o': 4 }, cache_ratio: { 'gpt-4o': 0.5 } };
const ids = { alpha: 0, broken: 0 };
let failedCode = '';

const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 40 } };

before(async () => {
  if (skip) return;
  up = await startFakeUpstream({
    'POST /ok/v1/chat/completions': (r, res) => sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: r.json.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage }),
    'POST /broken/v1/chat/completions': (_r, res) => sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } }),
  });
  gw = await startGateway({ name: 'sqlite' }, { env: RELAY_ENV });
  root = await gw.staff('ops', 'root');
  await gw.services.ratios.setCurrent(PRICES);
  const channel = async (name: 'alpha' | 'broken', path: string, fields: Record<string, unknown>) => {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: `${up.url}/${path}`, key: `sk-${name}-0123456789`, group: 'default', ...fields } });
    assert.equal(r.status, 200, r.text);
    ids[name] = r.json.data.ids[0];
  };
  await channel('alpha', 'ok', { models: 'gpt-4o', priority: 0, model_mapping: JSON.stringify({ 'gpt-4o': 'gpt-4o-2024-08-06' }) });
  await channel('broken', 'broken', { models: 'gpt-4o,claude-x', priority: 10 });

  // (60 uncached + 40 × 0.5 cached + 20 × 4 completion) × 1.25 = 200 quota = $0.0004
  const served = await relay(gw.url, '/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(served.status, 200, served.text);
  assert.equal(served.summary.attempts.length, 2);
  const failed = await relay(gw.url, '/chat/completions', { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(failed.status, 500, failed.text);
  failedCode = failed.json.error.code;
  await gw.relay.log.flush();
});

after(async () => {
  if (skip) return;
  await gw.close();
  await up.close();
});

const rows = (page: Page) => page.locator('table.relay-log > tbody > tr[data-id]');
const rowOf = (page: Page, model: string) => rows(page).filter({ has: page.locator('td.model', { hasText: model }) });

/** True when the canvas has pixels that are not blank (uPlot drew lines or axes on it). */
const drawn = (page: Page) =>
  page.locator('figure.chart canvas').evaluate((c: HTMLCanvasElement) => {
    const pixels = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] !== 0) return true;
    return false;
  });

test('gateway console relay page: calls with model, status, cost; filters; attempts; usage chart; phone width', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    await page.getByRole('link', { name: 'Relay' }).click();
    await page.getByRole('heading', { name: 'Relay calls' }).waitFor();
    await page.getByText('Page 1 · 2 in all').waitFor();

    // Newest first; the served call shows the mapping, its channel by name, tokens, cost and retries.
    assert.deepEqual(await rows(page).locator('td.model > span:first-child').allInnerTexts(), ['claude-x', 'gpt-4o']);
    const served = rowOf(page, 'gpt-4o');
    await served.getByText(`alpha #${ids.alpha}`).waitFor();
    const servedText = await served.innerText();
    for (const text of ['→ gpt-4o-2024-08-06', 'edge:acme', 'Succeeded', '200', '100 / 20', 'cached 40', '$0.000400']) assert.ok(servedText.includes(text), `${text} in ${servedText}`);
    assert.equal((await served.locator('td').last().innerText()).trim(), '1', 'one retry');
    const failed = rowOf(page, 'claude-x');
    const failedText = await failed.innerText();
    for (const text of ['Failed', '500', failedCode, '$0.000000']) assert.ok(failedText.includes(text), `${text} in ${failedText}`);
    assert.doesNotMatch(servedText + failedText, /error_code|upstream_model|first_byte_ms|GS0\d/, 'no raw field names or operation ids');

    // A row opens onto its attempts, in order: the broken channel's 500, then alpha's 200.
    const callId = await served.getAttribute('data-id');
    await page.getByRole('button', { name: `Show the 2 attempt(s) of call ${callId}` }).click();
    const attempts = page.locator(`tr[data-attempts-of="${callId}"] tr.attempt`);
    await attempts.nth(1).waitFor();
    assert.equal(await attempts.count(), 2);
    const [first, second] = await attempts.allInnerTexts();
    assert.match(first, new RegExp(`broken #${ids.broken}[\\s\\S]*Failed[\\s\\S]*500`));
    assert.match(second, new RegExp(`alpha #${ids.alpha}[\\s\\S]*Succeeded[\\s\\S]*200`));
    const logged = (await root.get('/api/relay/log?model=gpt-4o')).json.data.items[0];
    assert.ok(first.includes(logged.attempts[0].error_code), 'the failed attempt shows its error code');

    // The usage chart: totals over the range and a uPlot canvas with a line per model.
    const chart = page.locator('figure.chart');
    await chart.locator('canvas').waitFor();
    assert.ok(await drawn(page), 'the chart canvas is drawn');
    const legend = await chart.locator('.u-legend').innerText();
    assert.ok(legend.includes('gpt-4o') && legend.includes('claude-x'), legend);
    const totals = page.getByRole('definition');
    assert.deepEqual((await totals.allInnerTexts()).map((s) => s.trim()), ['2', '1', '120', '$0.000400']);
    await page.getByLabel('Split by').selectOption('channel');
    await chart.locator('.u-legend', { hasText: `alpha #${ids.alpha}` }).waitFor();
    // By caller: what each edge owner spent (the workload token's iss:sub).
    await page.getByLabel('Split by').selectOption('caller');
    await chart.locator('.u-legend', { hasText: 'edge:acme' }).waitFor();
    await page.getByLabel('Split by').selectOption('channel');
    await chart.locator('.u-legend', { hasText: `alpha #${ids.alpha}` }).waitFor();
    await page.getByLabel('Show', { exact: true }).selectOption('cost');
    await page.getByRole('figure', { name: 'Cost (USD) per hour, by Channel' }).locator('canvas').waitFor();
    assert.ok(await drawn(page), 'the chart is drawn again for the cost');
    await screenshot(page, 'gateway-relay');

    // Filters narrow the log: failed calls only, then one model.
    await page.getByLabel('Outcome').selectOption('error');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 1 in all').waitFor();
    assert.deepEqual(await rows(page).locator('td.model > span:first-child').allInnerTexts(), ['claude-x']);
    await page.getByLabel('Outcome').selectOption('');
    await page.getByLabel('Model').fill('gpt-4o');
    await page.getByLabel('Time range').selectOption('1h');
    await page.getByRole('button', { name: 'Apply' }).click();
    // The count reads "1 in all" before and after: wait for the new row itself.
    await rows(page).locator('td.model > span:first-child', { hasText: 'gpt-4o' }).waitFor();
    await page.getByText('Page 1 · 1 in all').waitFor();
    assert.deepEqual(await rows(page).locator('td.model > span:first-child').allInnerTexts(), ['gpt-4o']);
    await page.getByLabel('Channel ID').fill(String(ids.broken));
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 0 in all').waitFor();
    await page.getByLabel('Channel ID').fill('');
    await page.getByLabel('Model').fill('');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 2 in all').waitFor();

    // Chinese texts.
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '转发记录' }).waitFor();
    await page.getByRole('columnheader', { name: '耗时（首字节 / 总计）' }).waitFor();
    await page.getByRole('button', { name: 'English' }).click();

    // A 390 px phone: the page keeps its width, the log scrolls sideways inside its box, the chart fits.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => (document.querySelector('figure.chart canvas') as HTMLCanvasElement).getBoundingClientRect().width <= 390);
    const widths = await page.evaluate(() => {
      const box = document.querySelector('.table-scroll')!;
      return { page: document.documentElement.scrollWidth, box: box.clientWidth, table: box.scrollWidth, chart: document.querySelector('figure.chart canvas')!.getBoundingClientRect().right };
    });
    assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
    assert.ok(widths.table > widths.box, 'the log table scrolls inside its box');
    assert.ok(widths.chart <= 390, `the chart ends at ${widths.chart} px`);
    assert.ok(await drawn(page), 'the chart is drawn again at the new width');
    await screenshot(page, 'gateway-relay-phone');
  } finally {
    await browser.close();
  }
});
