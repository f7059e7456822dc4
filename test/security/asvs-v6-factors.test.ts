// OWASP ASVS 5.0 V6 (second factors, passkeys, identity providers) and 7.6.2, against real servers; see docs/security.md.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { authorize, startOAuthAccount } from '../helpers/oidc.js';
import type { Browser } from '../helpers/http.js';
import { ROLE } from '../../src/account/db.js';
import { newBackupCodes, newTotpSecret } from '../../src/account/two-factor/totp.js';
import { sixDigitCode } from '../../src/account/email/service.js';
import { codeAt, enrolTotp } from '../account/twofactor-helpers.js';

eachDatabase('ASVS V6 second factors', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: 'http://localhost:3000' } });
  });
  after(() => s.close());

  /** A fresh user with TOTP; returns its secret, backup codes and a logged-in browser. */
  async function totpUser(username: string) {
    await s.createUser(username, `${username} password!`);
    return enrolTotp(s, username, `${username} password!`);
  }

  /** First factor (A25) then the second step (A30) with `code`; returns the A30 reply. */
  async function loginWith(username: string, code: string) {
    const first = await s.browser().login(username, `${username} password!`);
    assert.equal(first.json.data.require_verification, true, first.text);
    return s.browser().post('/api/user/login/verify', { flow_token: first.json.data.flow_token, code });
  }

  test('ASVS 6.5.1 a TOTP code and a backup code work once', async () => {
    const { secret, backupCodes } = await totpUser('once');
    const code = codeAt(secret, 0);
    assert.equal((await loginWith('once', code)).json.success, true);
    const replay = await loginWith('once', code);
    assert.equal(replay.json.code, 'SECURITY_VERIFICATION_FAILED');
    assert.equal((await loginWith('once', backupCodes[0])).json.success, true);
    assert.equal((await loginWith('once', backupCodes[0])).json.code, 'SECURITY_VERIFICATION_FAILED');
    assert.equal((await loginWith('once', backupCodes[1])).json.success, true, 'other backup codes still work');
  });

  test('ASVS 6.5.3 codes and TOTP seeds come from the CSPRNG', () => {
    // No predictable generator anywhere in the account service or the gateway's staff code.
    const files = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : []));
    const offenders = [...files('src/account'), ...files('src/gateway/staff')].filter((f) => fs.readFileSync(f, 'utf8').includes('Math.random'));
    assert.deepEqual(offenders, []);
    // And what they produce does not repeat.
    const backup = newBackupCodes(2000);
    assert.equal(new Set(backup).size, backup.length);
    const seeds = Array.from({ length: 200 }, () => newTotpSecret());
    assert.equal(new Set(seeds).size, seeds.length);
    assert.ok(seeds.every((x) => x.length === 32), '160-bit seeds (32 base32 characters)');
  });

  test('ASVS 6.5.4 backup codes have 41 bits and email codes 6 digits', async () => {
    const { backupCodes } = await totpUser('entropy');
    assert.ok(backupCodes.length > 0);
    for (const c of backupCodes) assert.match(c, /^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    assert.ok(8 * Math.log2(36) >= 41, '8 characters of 36 symbols');
    const codes = Array.from({ length: 500 }, () => sixDigitCode());
    assert.ok(codes.every((c) => /^\d{6}$/.test(c)), '6 random digits ≈ 20 bits');
    assert.ok(new Set(codes).size > 480, 'spread over the whole range');
  });

  test('ASVS 6.5.6 the second factor can be removed by its owner and by an admin', async () => {
    const { b, secret } = await totpUser('revoker');
    const proof = await b.post('/api/verify', { method: '2fa', scope: '2fa.disable', code: codeAt(secret, 0) });
    assert.equal(proof.json.success, true, proof.text);
    const off = await b.post('/api/user/2fa/disable', {}, { 'x-security-proof': proof.json.data.proof_token });
    assert.equal(off.json.success, true, off.text);
    const direct = await s.browser().login('revoker', 'revoker password!');
    assert.ok(direct.json.data.access_token, 'no second step any more');

    await totpUser('lostphone');
    const lost = await s.services.users.byUsernameOrThrow('lostphone');
    await s.createUser('helpdesk', 'helpdesk password!', { role: ROLE.admin });
    const admin = s.browser();
    await admin.login('helpdesk', 'helpdesk password!');
    const removed = await admin.delete(`/api/user/${lost.id}/2fa`);
    assert.equal(removed.json.success, true, removed.text);
    assert.ok((await s.browser().login('lostphone', 'lostphone password!')).json.data.access_token);
  });

  test('ASVS 6.5.8 TOTP is checked against the server clock, not the client\'s', async () => {
    const { secret } = await totpUser('clock');
    const tenMinutesAhead = codeAt(secret, 20);
    const first = await s.browser().login('clock', 'clock password!');
    const claimed = new Date(Date.now() + 600_000).toUTCString();
    const r = await s.browser().post('/api/user/login/verify', { flow_token: first.json.data.flow_token, code: tenMinutesAhead, timestamp: Date.now() + 600_000 }, { date: claimed });
    assert.notEqual(r.json.success, true, r.text);
  });

  test('ASVS 6.7.2 passkey challenges are unique and at least 64 bits', async () => {
    const challenges: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await s.browser().post('/api/user/passkey/login/begin', {});
      assert.equal(r.json.success, true, r.text);
      challenges.push(r.json.data.options.challenge);
    }
    assert.equal(new Set(challenges).size, challenges.length);
    for (const c of challenges) assert.ok(Buffer.from(c, 'base64url').length >= 8, c);
  });
});

/** An RS256 JWT with the given header and payload, signed with `key` (synchronously, for the mock's event). */
function signJwt(header: object, payload: object, key: crypto.KeyObject | null) {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${input}.${key ? crypto.sign('sha256', Buffer.from(input), key).toString('base64url') : ''}`;
}

eachDatabase('ASVS V6 identity providers', (v) => {
  let ctx: Awaited<ReturnType<typeof startOAuthAccount>>;
  before(async () => {
    ctx = await startOAuthAccount(v);
  });
  after(() => ctx.close());

  async function startLogin(b: Browser, provider: string) {
    const st = await b.post('/api/oauth/state', { provider, intent: 'login' });
    assert.equal(st.json.success, true, st.text);
    return authorize(st.json.data.authorization_url);
  }
  async function loginVia(b: Browser, provider: string) {
    const back = await startLogin(b, provider);
    return b.get(`/api/oauth/${provider}?code=${back.get('code')}&state=${back.get('state')}`);
  }

  test('ASVS 6.8.1 the same subject at another provider is another identity', async () => {
    ctx.gh.state.user = { id: 5150, login: 'gh-person', email: 'gh-person@example.com' };
    const viaGithub = await loginVia(ctx.s.browser(), 'github');
    assert.equal(viaGithub.json.success, true, viaGithub.text);
    ctx.oidc.user.sub = '5150';
    ctx.oidc.user.preferred_username = 'oidc-person';
    ctx.oidc.user.email = 'oidc-person@example.com';
    const viaOidc = await loginVia(ctx.s.browser(), 'oidc');
    assert.equal(viaOidc.json.success, true, viaOidc.text);
    assert.notEqual(viaOidc.json.data.user.id, viaGithub.json.data.user.id);
    assert.equal((await loginVia(ctx.s.browser(), 'github')).json.data.user.id, viaGithub.json.data.user.id);
  });

  test('ASVS 6.8.2 an ID token not signed by the provider is refused', async () => {
    ctx.oidc.user.sub = 'signed-subject';
    ctx.oidc.user.preferred_username = 'signed-user';
    const foreign = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    for (const key of [foreign, null]) {
      const swap = (res: { body: Record<string, unknown> }) => {
        if (typeof res.body.id_token !== 'string') return;
        const [h, p] = res.body.id_token.split('.');
        const header = JSON.parse(Buffer.from(h, 'base64url').toString());
        res.body.id_token = signJwt(key ? header : { alg: 'none' }, JSON.parse(Buffer.from(p, 'base64url').toString()), key);
      };
      ctx.oidc.service.on('beforeResponse', swap);
      const b = ctx.s.browser();
      try {
        const r = await loginVia(b, 'oidc');
        assert.notEqual(r.json?.success, true, `${key ? 'foreign key' : 'alg none'}: ${r.text}`);
        assert.ok(!b.cookies.has('new_api_refresh'));
      } finally {
        ctx.oidc.service.off('beforeResponse', swap);
      }
    }
    assert.equal((await loginVia(ctx.s.browser(), 'oidc')).json.success, true, 'the genuine token still works');
  });

  test('ASVS 7.6.2 an OAuth callback creates a session only for a state the user started (A05)', async () => {
    ctx.gh.state.user = { id: 6161, login: 'consenting', email: 'consenting@example.com' };
    const count = async () => Number((await ctx.s.ctx.database.db.selectFrom('user_sessions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const back = await startLogin(ctx.s.browser(), 'github');
    for (const query of [`code=${back.get('code')}`, `code=${back.get('code')}&state=made-up-state`]) {
      const b = ctx.s.browser();
      const r = await b.get(`/api/oauth/github?${query}`);
      assert.equal(r.json.code, 'OAUTH_STATE_INVALID', r.text);
      assert.ok(!b.cookies.has('new_api_refresh'));
    }
    assert.equal(await count(), before, 'no session was created');
    assert.equal((await loginVia(ctx.s.browser(), 'github')).json.success, true);
    assert.equal(await count(), before + 1);
  });
});
