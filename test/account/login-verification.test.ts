import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { nowSeconds } from '../../src/account/db.js';
import { codeAt, enrolTotp } from './twofactor-helpers.js';

async function challenge(s: AccountServer, username: string, password: string) {
  const b = s.browser();
  const r = await b.login(username, password);
  assert.equal(r.json.success, true, r.text);
  assert.equal(r.json.data.require_verification, true);
  return { b, r, flow: r.json.data.flow_token as string };
}

eachDatabase('login verification (A25 branch, A30, A26)', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
  });
  after(() => s.close());

  test('a user with TOTP gets a challenge instead of a session; A30 completes it once', async () => {
    await s.createUser('lv1', 'lv1 password!');
    const { secret } = await enrolTotp(s, 'lv1', 'lv1 password!');
    const { b, r, flow } = await challenge(s, 'lv1', 'lv1 password!');
    const d = r.json.data;
    assert.deepEqual(d.methods, [{ method: '2fa', available: true }]);
    assert.ok(d.expires_at > nowSeconds() + 250 && d.expires_at <= nowSeconds() + 300);
    assert.equal(d.access_token, undefined);
    // No session yet: only the pending-login cookie of new-api's dashboard (see dashboard-login.test.ts).
    assert.deepEqual(r.setCookies.map((c) => c.split('=')[0]), ['new_api_pending_login']);
    assert.equal(r.headers.get('cache-control'), 'no-store');

    const code = codeAt(secret); // computed once: a 30 s step boundary between two calls must not change it
    const ok = await b.post('/api/user/login/verify', { flow_token: flow, code });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.success, true, ok.text);
    assert.match(ok.json.data.access_token, /^ey/);
    assert.equal(ok.json.data.session.login_method, 'password');
    assert.ok(ok.setCookies.some((c) => c.startsWith('new_api_refresh=')));
    b.accessToken = ok.json.data.access_token;
    assert.equal((await b.get('/api/user/2fa/status')).json.data.enabled, true);

    const replay = await s.browser().post('/api/user/login/verify', { flow_token: flow, code: codeAt(secret, 1) });
    assert.equal(replay.json.success, false);
    assert.equal(replay.json.code, 'AUTH_FLOW_INVALID');
    // The same TOTP code on a new flow is refused (replay guard).
    const next = await challenge(s, 'lv1', 'lv1 password!');
    const again = await next.b.post('/api/user/login/verify', { flow_token: next.flow, code });
    assert.equal(again.json.code, 'SECURITY_VERIFICATION_FAILED');
    const log = s.log.text();
    assert.ok(!log.includes(flow) && !log.includes(secret));
  });

  test('missing fields, invalid method, wrong code, backup codes, A26 alias', async () => {
    await s.createUser('lv2', 'lv2 password!');
    const { backupCodes } = await enrolTotp(s, 'lv2', 'lv2 password!');
    const { b, flow } = await challenge(s, 'lv2', 'lv2 password!');
    const noBody = await b.post('/api/user/login/verify');
    assert.equal(noBody.status, 400);
    assert.equal(noBody.json.code, 'INVALID_PARAMETERS');
    for (const body of [{}, { flow_token: flow }, { code: '123456' }, { flow_token: '', code: '123456' }]) {
      const r = await b.post('/api/user/login/verify', body);
      assert.equal(r.status, 200);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'LOGIN_INVALID_PARAMETERS');
    }
    for (const method of ['passkey', 'sms', 'password']) {
      const r = await b.post('/api/user/login/verify', { flow_token: flow, code: '123456', method });
      assert.equal(r.status, 403);
      assert.equal(r.json.code, 'SECURITY_PROOF_METHOD_MISMATCH');
    }
    const wrong = await b.post('/api/user/login/verify', { flow_token: flow, code: '000000', method: '2fa' });
    assert.equal(wrong.json.code, 'SECURITY_VERIFICATION_FAILED');
    assert.equal(wrong.setCookies.length, 0);
    const backup = await b.post('/api/user/login/2fa', { flow_token: flow, code: backupCodes[0].toLowerCase() });
    assert.equal(backup.json.success, true, backup.text);
    const second = await challenge(s, 'lv2', 'lv2 password!');
    const used = await second.b.post('/api/user/login/2fa', { flow_token: second.flow, code: backupCodes[0] });
    assert.equal(used.json.code, 'SECURITY_VERIFICATION_FAILED');
    const other = await second.b.post('/api/user/login/2fa', { flow_token: second.flow, code: backupCodes[1] });
    assert.equal(other.json.success, true);
  });

  test('expired, wrong-purpose, unknown and outdated flows are refused', async () => {
    await s.createUser('lv3', 'lv3 password!');
    const { secret } = await enrolTotp(s, 'lv3', 'lv3 password!');
    const uid = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'lv3').executeTakeFirstOrThrow()).id);
    const expired = await challenge(s, 'lv3', 'lv3 password!');
    await s.ctx.database.db
      .updateTable('auth_flows')
      .set({ expires_at: nowSeconds() - 1 })
      .where('user_id', '=', uid)
      .where('purpose', '=', 'login_verification')
      .execute();
    const r1 = await expired.b.post('/api/user/login/verify', { flow_token: expired.flow, code: codeAt(secret) });
    assert.equal(r1.json.code, 'AUTH_FLOW_INVALID');

    const foreign = await s.services.flows.create({ purpose: '2fa_setup', ttlSeconds: 300, userId: uid, payload: {} });
    const r2 = await s.browser().post('/api/user/login/verify', { flow_token: foreign.token, code: codeAt(secret) });
    assert.equal(r2.json.code, 'AUTH_FLOW_INVALID');
    const r3 = await s.browser().post('/api/user/login/verify', { flow_token: 'x'.repeat(43), code: codeAt(secret) });
    assert.equal(r3.json.code, 'AUTH_FLOW_INVALID');

    // A security change after the first factor (auth version bump) invalidates the flow.
    const stale = await challenge(s, 'lv3', 'lv3 password!');
    await s.services.users.setSecurity(uid, {});
    const r4 = await stale.b.post('/api/user/login/verify', { flow_token: stale.flow, code: codeAt(secret) });
    assert.equal(r4.json.code, 'AUTH_FLOW_INVALID');
    const fresh = await challenge(s, 'lv3', 'lv3 password!');
    const r5 = await fresh.b.post('/api/user/login/verify', { flow_token: fresh.flow, code: codeAt(secret) });
    assert.equal(r5.json.success, true, r5.text);
  });
});

eachDatabase('login verification under the session caps', (v) => {
  test('issuance limit answers 429 and the active cap 409 at the second step', async () => {
    const s = await startAccount(v, { env: { USER_SESSION_ISSUANCE_LIMIT: '3', USER_SESSION_ACTIVE_LIMIT: '10' } });
    const t = await startAccount(v, { env: { USER_SESSION_ACTIVE_LIMIT: '2' } });
    try {
      for (const [server, status, code] of [
        [s, 429, 'AUTH_SESSION_ISSUANCE_LIMIT'],
        [t, 409, 'AUTH_SESSION_LIMIT'],
      ] as const) {
        await server.createUser('cap', 'cap password!');
        const { backupCodes } = await enrolTotp(server, 'cap', 'cap password!');
        let i = 0;
        let last;
        for (;;) {
          const { b, flow } = await challenge(server, 'cap', 'cap password!');
          last = await b.post('/api/user/login/verify', { flow_token: flow, code: backupCodes[i++] });
          if (!last.json.success) break;
          assert.ok(i < 4, 'limit never reached');
        }
        assert.equal(last.status, status);
        assert.deepEqual(Object.keys(last.json).sort(), ['code', 'message', 'success']);
        assert.equal(last.json.code, code);
        assert.equal(last.setCookies.length, 0);
      }
    } finally {
      await s.close();
      await t.close();
    }
  });
});
