// OWASP ASVS 5.0 V7 (session management) against real account and gateway servers; see docs/security.md.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';
import { codeAt, endRecentLogin, enrolTotp, passwordProof } from '../account/twofactor-helpers.js';
import { USER_STATUS } from '../../src/account/db.js';
import { registerAccountCommands } from '../../src/account/cli.js';
import { runCli } from '../helpers/cli.js';

const PASSWORD = 'session test password';

eachDatabase('ASVS V7 session management', (v) => {
  let s: AccountServer;
  let gw: GatewayServer;
  before(async () => {
    s = await startAccount(v);
    gw = await startGateway(v);
  });
  after(async () => {
    await s.close();
    await gw.close();
  });

  async function device(username: string) {
    const b = s.browser();
    const r = await b.login(username, PASSWORD);
    assert.equal(r.json.success, true, r.text);
    return b;
  }
  const works = async (b: ReturnType<AccountServer['browser']>) => (await b.get('/api/user/sessions')).status === 200;
  const refreshes = async (b: ReturnType<AccountServer['browser']>) => (await b.post('/api/user/auth/refresh')).status === 200;
  async function refusedWithin(b: ReturnType<AccountServer['browser']>, ms: number) {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (!(await works(b))) return true;
    return !(await works(b));
  }
  const sidOf = (b: ReturnType<AccountServer['browser']>) => b.cookies.get('new_api_refresh')!.split('.')[0];

  test('ASVS 7.2.1 forged, altered and unsigned access tokens are refused', async () => {
    await s.createUser('verifier', PASSWORD);
    const b = await device('verifier');
    const [h, p] = b.accessToken!.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const someoneElse = { ...claims, sub: String(Number(claims.sub) + 1000) };
    const otherKey = crypto.createHmac('sha256', 'guessed-secret').update(`${h}.${enc(someoneElse)}`).digest('base64url');
    for (const token of [
      `${h}.${enc(someoneElse)}.${b.accessToken!.split('.')[2]}`, // altered claims, old signature
      `${h}.${enc(someoneElse)}.${otherKey}`, // signed with another key
      `${enc({ alg: 'none', typ: 'JWT' })}.${p}.`, // unsigned
    ]) {
      const forged = s.browser();
      forged.accessToken = token;
      assert.equal((await forged.get('/api/user/sessions')).status, 401, token);
    }
    assert.equal(await works(b), true);
  });

  test('ASVS 7.2.2 every login issues new tokens; a personal access token is no browser session', async () => {
    const id = await s.createUser('dynamic', PASSWORD);
    const [a, b] = [await device('dynamic'), await device('dynamic')];
    assert.notEqual(a.accessToken, b.accessToken);
    assert.notEqual(a.cookies.get('new_api_refresh'), b.cookies.get('new_api_refresh'));
    const pat = s.browser();
    pat.accessToken = await s.services.users.createAccessToken(id);
    const r = await pat.get('/api/user/sessions');
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'AUTH_SESSION_REQUIRED');
  });

  test('ASVS 7.2.3 refresh and gateway tokens carry at least 128 random bits', async () => {
    await s.createUser('entropic', PASSWORD);
    const secrets = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const [sid, secret] = (await device('entropic')).cookies.get('new_api_refresh')!.split('.');
      assert.match(sid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'random UUID session id');
      assert.ok(Buffer.from(secret, 'base64url').length >= 16, 'at least 128 bits besides the id');
      secrets.add(secret);
    }
    assert.equal(secrets.size, 5);
    await gw.services.staff.create('entropy-staff', 'admin');
    const tokens = await Promise.all([1, 2, 3].map(() => gw.services.staff.issueToken('entropy-staff')));
    for (const { token } of tokens) assert.ok(Buffer.from(token.replace(/^gwst_/, ''), 'base64url').length >= 16, token.slice(0, 5));
    assert.equal(new Set(tokens.map((t) => t.token)).size, 3);
  });

  test('ASVS 7.3.1 a session idle past the timeout cannot be refreshed', async () => {
    await s.createUser('sleepy', PASSWORD);
    const [idle, active] = [await device('sleepy'), await device('sleepy')];
    const idleFor = s.ctx.config.sessions.idleTimeoutSeconds + 60;
    const past = Math.floor(Date.now() / 1000) - idleFor;
    await s.ctx.database.db.updateTable('user_sessions').set({ last_active_at: past, created_at: past }).where('sid', '=', sidOf(idle)).execute();
    const r = await idle.post('/api/user/auth/refresh');
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.code, 'AUTH_SESSION_REVOKED');
    assert.equal(await works(idle), false, 'the session was ended, its access token too');
    assert.equal(await refreshes(active), true, 'a session in use is not affected');
  });

  test('ASVS 7.3.2 refresh does not extend the absolute lifetime', async () => {
    await s.createUser('mortal', PASSWORD);
    const b = await device('mortal');
    const sid = sidOf(b);
    const row = () => s.ctx.database.db.selectFrom('user_sessions').select(['expires_at']).where('sid', '=', sid).executeTakeFirstOrThrow();
    const expires = Number((await row()).expires_at);
    assert.ok(await refreshes(b));
    assert.equal(Number((await row()).expires_at), expires, 'refresh kept the end');
    await s.ctx.database.db.updateTable('user_sessions').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('sid', '=', sid).execute();
    await s.services.sessions.invalidateSession(sid);
    assert.equal(await refreshes(b), false);
    assert.equal(await works(b), false);
  });

  test('ASVS 7.4.1 after logout neither the access token nor the refresh cookie works', async () => {
    await s.createUser('leaver', PASSWORD);
    const b = await device('leaver');
    const stolen = { access: b.accessToken!, cookie: b.cookies.get('new_api_refresh')! };
    assert.equal((await b.post('/api/user/auth/logout')).json.success, true);
    const thief = s.browser();
    thief.accessToken = stolen.access;
    assert.equal(await works(thief), false);
    thief.accessToken = undefined;
    thief.cookies.set('new_api_refresh', stolen.cookie);
    assert.equal(await refreshes(thief), false);
  });

  test('ASVS 7.4.2 disabling a user or a staff identity ends all its sessions', async () => {
    const id = await s.createUser('departed', PASSWORD);
    const [a, b] = [await device('departed'), await device('departed')];
    // What `user disable` (src/account/cli.ts) does.
    await s.services.users.setSecurity(id, { status: USER_STATUS.disabled });
    await s.services.sessions.revokeAllOfUser(id, 'admin_disabled');
    for (const d of [a, b]) assert.equal(await works(d), false);
    assert.equal(await refreshes(b), false);

    const staff = await gw.staff('departed-staff', 'admin');
    assert.equal((await staff.get('/api/channel/')).status, 200);
    await gw.services.staff.setDisabled('departed-staff', true);
    assert.equal((await staff.get('/api/channel/')).status, 401);
  });

  test('ASVS 7.4.5 an operator ends the sessions of one user, then of every user (CLI user logout)', async () => {
    await s.createUser('ended-one', PASSWORD);
    await s.createUser('ended-all', PASSWORD);
    const [one, other] = [await device('ended-one'), await device('ended-all')];
    const single = await runCli(registerAccountCommands, s.env, ['user', 'logout', '--username', 'ended-one']);
    assert.equal(single.error, null);
    assert.deepEqual(single.lines, ['1 session(s) ended']);
    // Another process: through Redis at once, else when this server's one-second state cache expires.
    assert.equal(await refusedWithin(one, 3000), true);
    assert.equal(await refreshes(one), false);
    assert.equal(await works(other), true, 'other users keep theirs');
    assert.match((await runCli(registerAccountCommands, s.env, ['user', 'logout'])).error ?? '', /exactly one of/);
    const all = await runCli(registerAccountCommands, s.env, ['user', 'logout', '--all']);
    assert.equal(all.error, null);
    assert.equal(await refusedWithin(other, 3000), true);
    assert.equal(await refreshes(other), false);
    assert.equal((await s.browser().login('ended-all', PASSWORD)).json.success, true, 'logging in again works');
  });

  test('ASVS 7.4.3 other sessions end after a reset or a second-factor change', async () => {
    await s.createUser('changer7', PASSWORD);
    const other = await device('changer7');
    const { b } = await enrolTotp(s, 'changer7', PASSWORD);
    assert.equal(await works(other), false, 'enabling TOTP ended the other session');
    assert.equal(await refreshes(other), false);
    assert.equal(await works(b), true, 'the session that made the change goes on');
    // Reset: every session ends (the flow is in test/account/reset.test.ts; this is its last step).
    const id = Number((await s.services.users.byUsernameOrThrow('changer7')).id);
    assert.ok((await s.services.sessions.revokeAllOfUser(id, 'password_reset')) >= 1);
    assert.equal(await works(b), false);
  });

  test('ASVS 7.5.1 second-factor and binding changes need a fresh proof (or, to add a factor, a sign-in of the last minutes)', async () => {
    const uid = await s.createUser('stepper', PASSWORD);
    const b = await device('stepper');
    // A binding needs the proof even right after the sign-in; adding a factor only past the recent-login window.
    assert.equal((await b.post('/api/oauth/email/bind/start', { email: 'stepper@example.com' })).status, 403);
    await endRecentLogin(s, uid);
    const noProof = await b.post('/api/user/2fa/setup', {});
    assert.equal(noProof.status, 403, noProof.text);
    const wrongScope = await passwordProof(b, PASSWORD, 'passkey.register');
    assert.equal((await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': wrongScope })).status, 403);
    const bind = await b.post('/api/oauth/email/bind/start', { email: 'stepper@example.com' });
    assert.equal(bind.status, 403, bind.text);
    const proof = await passwordProof(b, PASSWORD, '2fa.setup');
    assert.equal((await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof })).json.success, true);
    assert.equal((await b.post('/api/user/2fa/setup', {}, { 'x-security-proof': proof })).status, 403, 'a proof works once');
  });

  test('ASVS 7.5.3 revealing a channel key needs a fresh TOTP proof', async () => {
    const root = await gw.staff('key-keeper', 'root');
    const { secret } = await gw.services.staff.enrollTotp('key-keeper');
    const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'asvs-753', key: 'sk-asvs-753-secret', models: 'm' } });
    const id = created.json.data.ids[0];
    const bare = await root.post(`/api/channel/${id}/key`);
    assert.equal(bare.json.code, 'GW_PROOF_REQUIRED');
    const proof = await root.post('/api/staff/verify', { code: codeAt(secret, 0), scope: 'channel.key.read', context: { channel_id: id } });
    assert.equal(proof.status, 200, proof.text);
    const h = { 'x-security-proof': proof.json.data.proof_token };
    assert.equal((await root.post(`/api/channel/${id}/key`, undefined, h)).json.data.key, 'sk-asvs-753-secret');
    assert.equal((await root.post(`/api/channel/${id}/key`, undefined, h)).json.code, 'GW_PROOF_INVALID', 'once only');
  });
});
