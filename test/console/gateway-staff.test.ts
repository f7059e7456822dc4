import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { browserSkip, launch, screenshot, signedInGatewayPage } from '../helpers/browser.js';

// The staff and audit pages of the gateway console (GS06–GS15) on a real gateway and Chromium: create a staff
// member and a service, change permissions, issue a token behind the TOTP step-up and copy it, revoke it,
// enroll a second factor (QR code), disable and enable through the console's confirm dialog, filter the
// audit log; then a phone's width in Chinese, the root-only message for an admin, and the message that
// names the enrollment command for a root without a second factor. Every change is read back through the API.
let gw: GatewayServer;
let boss: StaffClient;
let bossSecret = '';
const skip = browserSkip;

const codeNow = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();

before(async () => {
  if (skip) return;
  gw = await startGateway({ name: 'sqlite' });
  boss = await gw.staff('boss', 'root');
  bossSecret = (await gw.services.staff.enrollTotp('boss')).secret;
});

after(async () => {
  if (skip) return;
  await gw.close();
});

/** The current code of boss's authenticator, its last step forgotten so it is accepted again. */
async function bossCode() {
  await gw.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).where('name', '=', 'boss').execute();
  return codeNow(bossSecret);
}

const listed = async () => (await boss.get('/api/staff')).json.data.items as any[];
const entry = async (name: string) => (await listed()).find((s) => s.name === name);
const row = (page: Page, name: string) => page.locator(`table.staff-table tr[data-name="${name}"]`);

test('gateway console staff page: create, permissions, tokens with step-up, second factor, disable/enable, audit log', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', boss.token!);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
    await page.getByRole('link', { name: 'Staff', exact: true }).click();
    await page.getByRole('heading', { name: 'Staff and service identities' }).waitFor();
    await row(page, 'boss').getByText('you').waitFor();
    assert.equal(await row(page, 'boss').getByRole('button', { name: 'Disable' }).count(), 0, 'no Disable on the own row');

    // Create an admin and a service identity.
    await page.getByRole('button', { name: 'New identity' }).click();
    let dialog = page.getByRole('dialog', { name: 'New staff member or service' });
    await dialog.getByLabel('Name').fill('ops');
    await dialog.getByLabel('Role').selectOption('admin');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await page.getByText('ops is created.').waitFor();
    await row(page, 'ops').waitFor();
    const ops = await entry('ops');
    assert.deepEqual([ops.kind, ops.role, ops.disabled, ops.totp_enrolled], ['staff', 'admin', false, false]);
    await page.getByRole('button', { name: 'New identity' }).click();
    dialog = page.getByRole('dialog', { name: 'New staff member or service' });
    await dialog.getByLabel('Kind').selectOption('service');
    await dialog.getByLabel('Name').fill('feeder');
    await dialog.getByLabel('Read channels').check();
    await dialog.getByRole('button', { name: 'Create' }).click();
    await row(page, 'feeder').waitFor();
    assert.deepEqual((await entry('feeder')).granted, ['authz.ChannelRead']);
    await row(page, 'feeder').getByText('Read channels').waitFor();

    // Permissions by readable name: grant one, deny one; read back.
    await row(page, 'ops').getByRole('button', { name: 'Permissions' }).click();
    dialog = page.getByRole('dialog', { name: 'Permissions of ops' });
    await dialog.getByLabel('Bind task plugins').selectOption('grant');
    await dialog.getByText('Bind task plugins: saved.').waitFor();
    await dialog.getByLabel('Read channels').selectOption('deny');
    await dialog.getByText('Read channels: saved.').waitFor();
    const opsPerms = await entry('ops');
    assert.deepEqual([opsPerms.granted, opsPerms.denied], [['authz.TaskPluginBind'], ['authz.ChannelRead']]);
    assert.ok(!opsPerms.permissions.includes('authz.ChannelRead'));
    assert.doesNotMatch(await dialog.innerText(), /authz\.|GS0\d/, 'permissions by name, no raw ids');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Tokens: issue one behind the step-up, shown once, copied; then revoke it through the confirm dialog.
    await row(page, 'ops').getByRole('button', { name: 'Tokens' }).click();
    dialog = page.getByRole('dialog', { name: 'Tokens of ops' });
    await dialog.getByText('No live token.').waitFor();
    await dialog.getByLabel('Valid for').selectOption('30d');
    await dialog.getByLabel('Your authenticator code').fill(await bossCode());
    await dialog.getByRole('button', { name: 'Issue a token' }).click();
    const shown = (await dialog.getByTestId('issued-token').innerText()).trim();
    assert.match(shown, /^gwst_/);
    await dialog.getByRole('button', { name: 'Copy token' }).click();
    await dialog.getByRole('button', { name: 'Copied', exact: true }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), shown);
    assert.equal((await gw.client(shown).get('/api/staff')).json.code, 'GW_ROOT_REQUIRED', 'the issued token authenticates ops (an admin)');
    const tokens = (await boss.get(`/api/staff/${ops.id}/tokens`)).json.data;
    assert.equal(tokens.length, 1);
    assert.ok(tokens[0].expires_at > Date.now() / 1000 + 29 * 86400);
    await screenshot(page, 'gateway-staff-token');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    assert.equal(await dialog.getByTestId('issued-token').count(), 0, 'the token is gone from the page');
    await dialog.getByRole('button', { name: `Revoke token #${tokens[0].id}` }).click();
    const confirm = page.getByRole('alertdialog', { name: `Revoke token #${tokens[0].id}?` });
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByText(`Token #${tokens[0].id} is revoked.`).waitFor();
    assert.deepEqual((await boss.get(`/api/staff/${ops.id}/tokens`)).json.data, []);
    assert.equal((await gw.client(shown).get('/api/staff')).status, 401);
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Second factor: QR code and secret, once.
    await row(page, 'ops').getByRole('button', { name: 'Second factor' }).click();
    dialog = page.getByRole('dialog', { name: 'Second factor of ops' });
    await dialog.getByLabel('Your authenticator code').fill(await bossCode());
    await dialog.getByRole('button', { name: 'Enroll' }).click();
    const qr = dialog.getByRole('img', { name: 'QR code for the authenticator of ops' });
    await qr.waitFor();
    assert.match((await qr.getAttribute('src'))!, /^data:image\/png;base64,/);
    assert.ok((await qr.evaluate((img: HTMLImageElement) => img.naturalWidth)) > 0, 'the QR code is drawn');
    const secret = (await dialog.getByTestId('totp-secret').innerText()).trim();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await dialog.getByRole('button', { name: 'Copy secret' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    assert.equal((await entry('ops')).totp_enrolled, true);
    await screenshot(page, 'gateway-staff-totp');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Disable with the console's own confirm dialog: Cancel changes nothing, Disable does; then enable again.
    await row(page, 'ops').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('alertdialog', { name: 'Disable ops?' }).getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await entry('ops')).disabled, false);
    await row(page, 'ops').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('alertdialog', { name: 'Disable ops?' }).getByRole('button', { name: 'Disable' }).click();
    await page.getByText('ops is disabled.').waitFor();
    await row(page, 'ops').getByText('Disabled', { exact: true }).waitFor();
    assert.equal((await entry('ops')).disabled, true);
    await row(page, 'ops').getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('alertdialog', { name: 'Enable ops?' }).getByRole('button', { name: 'Enable' }).click();
    await page.getByText('ops is enabled.').waitFor();
    assert.equal((await entry('ops')).disabled, false);
    assert.doesNotMatch(await page.locator('main').innerText(), /authz\.|GS\d\d|totp_enrolled|live_tokens/, 'no raw names on the page');
    await screenshot(page, 'gateway-staff');

    // The audit log: the writes above, newest first, filtered by action and actor.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log', exact: true }).waitFor();
    const audited = (await boss.get('/api/staff/audit')).json.data;
    await page.getByText(`Page 1 · ${audited.total} in all`).waitFor();
    const auditRows = page.locator('table.audit-table tbody tr');
    assert.equal(await auditRows.first().getAttribute('data-id'), String(audited.items[0].id), 'newest first');
    await page.getByLabel('Action').selectOption('GS11');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 1 in all').waitFor();
    const issuedRow = await auditRows.first().innerText();
    for (const text of ['boss', 'Token issued', 'name: ops', `token: ${tokens[0].id}`]) assert.ok(issuedRow.includes(text), `${text} in ${issuedRow}`);
    assert.ok(!issuedRow.includes(shown), 'no token in the audit log');
    await page.getByLabel('Action').selectOption('');
    await page.getByLabel('Done by (name)').fill('nobody');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 0 in all').waitFor();
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.getByText(`Page 1 · ${audited.total} in all`).waitFor();
    await screenshot(page, 'gateway-audit');
    await page.getByLabel('Done by (name)').fill('boss');
    await page.getByLabel('From').fill('2000-01-01T00:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText(`Page 1 · ${audited.total} in all`).waitFor();
    await page.getByLabel('To').fill('2000-01-02T00:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Page 1 · 0 in all').waitFor();
  } finally {
    await browser.close();
  }
});

test('gateway console staff page at 390 px in Chinese: cards, no sideways page; audit log', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/', boss.token!);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('link', { name: '员工', exact: true }).click();
    await page.getByRole('heading', { name: '员工与服务身份' }).waitFor();
    await row(page, 'ops').getByRole('button', { name: '令牌' }).waitFor();
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, row: document.querySelector('table.staff-table tbody tr')!.getBoundingClientRect().right }));
    assert.ok(widths.page <= 390, `the page is ${widths.page} px wide`);
    assert.ok(widths.row <= 390, `a card ends at ${widths.row} px`);
    await row(page, 'ops').getByText('管理员').waitFor();
    await screenshot(page, 'gateway-staff-phone-zh');

    // Disable and enable in Chinese, read back.
    await row(page, 'feeder').getByRole('button', { name: '禁用' }).click();
    await page.getByRole('alertdialog', { name: '禁用 feeder？' }).getByRole('button', { name: '禁用' }).click();
    await page.getByText('feeder 已禁用。').waitFor();
    assert.equal((await entry('feeder')).disabled, true);
    await row(page, 'feeder').getByRole('button', { name: '启用' }).click();
    await page.getByRole('alertdialog', { name: '启用 feeder？' }).getByRole('button', { name: '启用' }).click();
    await page.getByText('feeder 已启用。').waitFor();
    assert.equal((await entry('feeder')).disabled, false);

    // A token for the service in Chinese, behind the step-up.
    await row(page, 'feeder').getByRole('button', { name: '令牌' }).click();
    const dialog = page.getByRole('dialog', { name: 'feeder 的令牌' });
    await dialog.getByLabel('您的验证器代码').fill(await bossCode());
    await dialog.getByRole('button', { name: '签发令牌' }).click();
    const token = (await dialog.getByTestId('issued-token').innerText()).trim();
    assert.equal((await gw.client(token).get('/api/channel/')).status, 200, 'the service token reads channels');
    const dialogBox = await dialog.boundingBox();
    assert.ok(dialogBox && dialogBox.x >= 0 && dialogBox.x + dialogBox.width <= 390, 'the dialog fits the phone');
    await screenshot(page, 'gateway-staff-token-phone-zh');
    await dialog.getByRole('button', { name: '关闭' }).click();

    await page.getByRole('link', { name: '审计日志' }).click();
    await page.getByRole('heading', { name: '审计日志', exact: true }).waitFor();
    await page.getByLabel('操作', { exact: true }).selectOption('GS08');
    await page.getByRole('button', { name: '应用' }).click();
    const total = (await boss.get('/api/staff/audit?action=GS08')).json.data.total;
    await page.getByText(`第 1 页 · 共 ${total} 条`).waitFor();
    await page.locator('table.audit-table tbody tr').first().getByText('禁用或启用身份').waitFor();
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390);
    await screenshot(page, 'gateway-audit-phone-zh');
    await page.getByRole('button', { name: 'English' }).click();
  } finally {
    await browser.close();
  }
});

test('gateway console staff page: an admin sees "root only"; a root without a second factor is told the command', { skip }, async () => {
  const admin = await gw.staff('helper', 'admin');
  await gw.services.staff.create('newroot', 'root');
  const newroot = gw.client((await gw.services.staff.issueToken('newroot')).token);
  const browser = await launch();
  try {
    const page = await signedInGatewayPage(browser, gw.url + '/staff', admin.token!);
    await page.getByTestId('root-only').getByText('Root only').waitFor();
    assert.equal((await admin.get('/api/staff')).status, 403);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByTestId('root-only').waitFor();
    await page.close();

    const rootPage = await signedInGatewayPage(browser, gw.url + '/staff', newroot.token!);
    await row(rootPage, 'ops').getByRole('button', { name: 'Tokens' }).click();
    const dialog = rootPage.getByRole('dialog', { name: 'Tokens of ops' });
    await dialog.getByLabel('Your authenticator code').fill('123456');
    await dialog.getByRole('button', { name: 'Issue a token' }).click();
    await dialog.getByRole('alert').getByText('npm run cli -- staff totp --name newroot').waitFor();
    assert.deepEqual((await boss.get(`/api/staff/${(await entry('ops')).id}/tokens`)).json.data, [], 'no token issued');
    await screenshot(rootPage, 'gateway-staff-no-factor');
  } finally {
    await browser.close();
  }
});
