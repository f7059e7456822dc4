import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { AccountServer } from '../helpers/account.js';
import { authorize, startOAuthAccount } from '../helpers/oidc.js';
import { browserSkip, launch, screenshot } from '../helpers/browser.js';

// The `oauth` step-up method in the account console: a user who signed up through OIDC (no password, no
// factor) enables two-factor; the verification dialog sends the browser through the provider (A05 intent
// verify → A01), and back on the security page the setup it asked for runs with the proof.
let s: AccountServer;
let oidc: Awaited<ReturnType<typeof startOAuthAccount>>['oidc'];
let close = async () => {};
const skip = browserSkip;

before(async () => {
  if (skip) return;
  // No SERVER_ADDRESS: the provider returns to this server's own address, where the console is served.
  ({ s, oidc, close } = await startOAuthAccount({ name: 'sqlite' }, { OIDC_NAME: 'Example ID', SERVER_ADDRESS: '' }));
  oidc.user.sub = 'oidc-stepup-1';
  oidc.user.preferred_username = 'olga';
});

after(async () => {
  if (!skip) await close();
});

test('account console: two-factor setup verified through the linked OIDC account (oauth step-up)', { skip }, async () => {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.goto(s.url + '/login');
    await page.getByRole('button', { name: 'Continue with Example ID' }).click();
    await page.getByText('Signed in as olga').waitFor();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();

    // Only the linked account is offered; the button names the provider and leaves for it.
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('radio', { name: 'Linked account' }).waitFor();
    assert.equal(await dialog.getByRole('radio').count(), 1);
    await dialog.getByRole('button', { name: 'Continue with Example ID' }).click();

    // Back from the provider: the setup runs without asking again.
    const secret = await page.getByTestId('totp-secret').innerText();
    assert.equal(new URL(page.url()).pathname, '/');
    assert.ok(!(await page.content()).includes('proof_token'));
    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate();
    await page.getByLabel('Code from the app').fill(code);
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page.getByTestId('twofa-status').getByText('Enabled').waitFor();
    await screenshot(page, 'account-oauth-stepup');

    // Through the API: the next OIDC login of this user now asks for the second factor.
    const api = s.browser();
    const st = (await api.post('/api/oauth/state', { provider: 'oidc', intent: 'login' })).json.data;
    const back = await authorize(st.authorization_url);
    const login = (await api.get(`/api/oauth/oidc?code=${back.get('code')}&state=${back.get('state')}`)).json;
    assert.equal(login.data.require_verification, true, JSON.stringify(login));
    assert.deepEqual(login.data.methods.map((m: any) => m.method), ['2fa']);

    // The pending verification was forgotten once the provider answered.
    assert.equal(await page.evaluate(() => sessionStorage.getItem('stepup_pending')), null);
  } finally {
    await browser.close();
  }
});
