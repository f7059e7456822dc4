import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// Batch actions on selected rows (G28, G13, G12, G15) and tag mode (tag rows with G31, G30 and G29) in the
// gateway console; each result is read back through the API.
let gw: GatewayServer;
let root: StaffClient;
const skip = browserSkip;
const ids: Record<string, number> = {};

before(async () => {
  if (skip) return;
  gw = await startGateway({ name: 'sqlite' });
  root = await gw.staff('ops', 'root');
  for (const [name, tag] of [['a1', 't-a'], ['a2', 't-a'], ['b1', 't-b'], ['c1', null], ['c2', null]] as const) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { name, type: 1, key: `sk-${name}`, models: 'gpt-4o', group: 'default', tag } });
    assert.equal(r.status, 200, r.text);
    ids[name] = r.json.data.ids[0];
  }
});

after(async () => {
  if (!skip) await gw.close();
});

const channel = async (name: string) => (await root.get(`/api/channel/${ids[name]}`)).json.data;

test('gateway console channels: batch status, tag and delete on selected rows; tag mode with tag actions', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', root.token!);
    const select = (name: string) => page.getByLabel(`Select channel #${ids[name]}`, { exact: true }).check();
    const batch = page.getByRole('group', { name: 'Actions on the selected channels' });
    await page.getByText('Page 1 · 5 in all').waitFor();

    // Tag c1 and c2 together.
    await select('c1');
    await select('c2');
    await batch.getByText('2 selected').waitFor();
    await batch.getByPlaceholder('empty removes the tag').fill('t-c');
    await batch.getByRole('button', { name: 'Set tag' }).click();
    await batch.waitFor({ state: 'detached' });
    assert.deepEqual([(await channel('c1')).tag, (await channel('c2')).tag], ['t-c', 't-c']);

    // Disable a1 and b1 together.
    await select('a1');
    await select('b1');
    await batch.getByRole('button', { name: 'Disable' }).click();
    await batch.waitFor({ state: 'detached' });
    assert.deepEqual([(await channel('a1')).status, (await channel('b1')).status, (await channel('a2')).status], [2, 2, 1]);

    // Tag mode: a row per tag with its channels beneath; enable t-a, disable t-c, then edit t-a.
    await page.getByLabel('Group by tag').check();
    await page.getByRole('button', { name: 'Search' }).click();
    const tagRow = (tag: string) => page.locator(`tr.tag-row[data-tag="${tag}"]`);
    await tagRow('t-a').getByText('1/2 enabled').waitFor();
    assert.deepEqual(await page.locator('tr.tag-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-tag'))), ['t-a', 't-b', 't-c']);
    assert.equal(await page.locator('tr.child').count(), 5);
    await screenshot(page, 'gateway-channels-tags');
    await tagRow('t-a').getByRole('button', { name: 'Enable tag' }).click();
    await tagRow('t-a').getByText('2/2 enabled').waitFor();
    assert.equal((await channel('a1')).status, 1);
    await tagRow('t-c').getByRole('button', { name: 'Disable tag' }).click();
    await tagRow('t-c').getByText('0/2 enabled').waitFor();
    assert.deepEqual([(await channel('c1')).status, (await channel('c2')).status], [2, 2]);
    const dialog = page.getByRole('dialog');
    await tagRow('t-a').getByRole('button', { name: 'Edit tag' }).click();
    await dialog.locator('button[type="submit"]:enabled').waitFor(); // the tag's models are loaded (G32)
    assert.equal(await dialog.getByLabel('Models (comma-separated)').inputValue(), 'gpt-4o');
    await dialog.getByLabel('Tag name').fill('t-z');
    await dialog.getByLabel('Priority').fill('7');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Tag t-z: 2 channel(s) saved.').waitFor();
    await tagRow('t-z').waitFor();
    for (const name of ['a1', 'a2']) assert.deepEqual([(await channel(name)).tag, (await channel(name)).priority], ['t-z', 7]);
    // Selecting a tag row selects its channels.
    await tagRow('t-b').getByRole('checkbox').check();
    await batch.getByText('1 selected').waitFor();
    await batch.getByRole('button', { name: 'Clear selection' }).click();

    // Back to the plain table: delete c2 by selection, then every disabled channel (b1, c1).
    await page.getByLabel('Group by tag').uncheck();
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Page 1 · 5 in all').waitFor();
    // Deletions are confirmed in the console's own dialog (never window.confirm).
    page.on('dialog', (d) => assert.fail(`a browser dialog opened: ${d.message()}`));
    const confirm = page.getByRole('alertdialog');
    await select('c2');
    await batch.getByRole('button', { name: 'Delete selected' }).click();
    await confirm.getByText('Delete the 1 selected channel(s)?').waitFor();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Page 1 · 4 in all').waitFor();
    assert.equal((await root.get(`/api/channel/${ids.c2}`)).status, 404);
    await page.getByRole('button', { name: 'Delete disabled channels' }).click();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await root.get(`/api/channel/${ids.b1}`)).status, 200, 'Cancel deletes nothing');
    await page.getByRole('button', { name: 'Delete disabled channels' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Deleted 2 disabled channel(s).').waitFor();
    await page.getByText('Page 1 · 2 in all').waitFor();
    const left = (await root.get('/api/channel/?p=1&page_size=10')).json.data.items.map((c: any) => c.name).sort();
    assert.deepEqual(left, ['a1', 'a2']);
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('button', { name: '删除已禁用渠道' }).waitFor();
  } finally {
    await browser.close();
  }
});
