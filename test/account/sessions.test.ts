import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { Browser } from '../helpers/http.js';

const PASSWORD = 'sessions-test-password';

eachDatabase('A23 logout', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v);
    await s.createUser('lou', PASSWORD);
  });
  after(() => s.close());

  async function device(): Promise<Browser> {
    const b = s.browser();
    assert.equal((await b.login('lou', PASSWORD)).json.success, true);
    return b;
  }

  test('logout with the access credential revokes only the current session and clears its cookie', async () => {
    const phone = await device();
    const laptop = await device();
    const sid = phone.cookies.get('new_api_refresh')!.split('.')[0];
    const r = await phone.post('/api/user/auth/logout');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.data, { revoked_sid: sid, cookie_cleared: true });
    assert.ok(!phone.cookies.has('new_api_refresh'));
    assert.equal((await phone.get('/api/user/sessions')).status, 401);
    // Other devices keep working.
    assert.equal((await laptop.get('/api/user/sessions')).json.success, true);
    assert.equal((await laptop.post('/api/user/auth/refresh')).status, 200);
  });

  test('logout with only the refresh cookie revokes that session', async () => {
    const b = await device();
    const token = b.accessToken;
    b.accessToken = undefined;
    const sid = b.cookies.get('new_api_refresh')!.split('.')[0];
    const r = await b.post('/api/user/auth/logout');
    assert.equal(r.json.data.revoked_sid, sid);
    const check = s.browser();
    check.accessToken = token;
    const after = await check.get('/api/user/sessions');
    assert.equal(after.status, 401);
    assert.equal(after.json.code, 'AUTH_SESSION_REVOKED');
  });

  test('repeat logout and logout without any cookie still succeed', async () => {
    const b = await device();
    assert.equal((await b.post('/api/user/auth/logout')).json.success, true);
    b.accessToken = undefined;
    const again = await b.post('/api/user/auth/logout');
    assert.equal(again.status, 200);
    assert.equal(again.json.success, true);
    const none = await s.browser().post('/api/user/auth/logout');
    assert.equal(none.json.success, true);
    assert.ok(none.setCookies.some((c) => /^new_api_refresh=;/.test(c)));
  });

  test('cookie versus expected session conflict: 409 and nothing revoked', async () => {
    const b = await device();
    b.accessToken = undefined;
    const r = await b.post('/api/user/auth/logout', undefined, { 'x-auth-session': '00000000-0000-4000-8000-000000000000' });
    assert.equal(r.status, 409);
    assert.equal(r.json.code, 'AUTH_SESSION_MISMATCH');
    assert.equal((await b.post('/api/user/auth/refresh')).status, 200);
  });

  test('bearer of one session and cookie of another: the bearer session is revoked, the cookie kept', async () => {
    const a = await device();
    const other = await device();
    a.cookies.set('new_api_refresh', other.cookies.get('new_api_refresh')!);
    const r = await a.post('/api/user/auth/logout');
    assert.equal(r.json.data.cookie_cleared, false);
    assert.equal((await other.post('/api/user/auth/refresh')).status, 200);
  });

  test('logout is behind the origin guard', async () => {
    const b = await device();
    const r = await b.post('/api/user/auth/logout', undefined, { origin: 'https://evil.example' });
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'AUTH_ORIGIN_FORBIDDEN');
    assert.equal((await b.get('/api/user/sessions')).json.success, true);
  });
});

eachDatabase('A43-A45 session list and revocation', (v) => {
  let s: AccountServer;
  let patToken: string;
  before(async () => {
    s = await startAccount(v);
    const id = await s.createUser('mia', PASSWORD);
    await s.createUser('ned', PASSWORD);
    patToken = await s.services.users.createAccessToken(id);
  });
  after(() => s.close());

  async function device(name = 'mia', ua = 'test-agent'): Promise<Browser> {
    const b = s.browser();
    const r = await b.request('POST', '/api/user/login', { body: { username: name, password: PASSWORD }, headers: { 'user-agent': ua } });
    assert.equal(r.json.success, true);
    b.accessToken = r.json.data.access_token;
    return b;
  }

  test('list marks the current device first and shows the reference fields only', async () => {
    const one = await device('mia', 'agent-one');
    const two = await device('mia', 'agent-two');
    const r = await two.get('/api/user/sessions');
    assert.equal(r.json.success, true);
    const list = r.json.data;
    assert.ok(list.length >= 2);
    assert.equal(list[0].current, true);
    assert.equal(list[0].user_agent, 'agent-two');
    assert.equal(list.filter((x: any) => x.current).length, 1);
    assert.deepEqual(Object.keys(list[0]).sort(), ['created_at', 'current', 'expires_at', 'ip', 'last_active_at', 'login_method', 'sid', 'user_agent']);
    assert.ok(list.some((x: any) => x.user_agent === 'agent-one' && !x.current));
    assert.equal(r.headers.get('cache-control'), 'no-store');
    void one;
  });

  test("other users' sessions are invisible and cannot be revoked (404)", async () => {
    const mine = await device('mia');
    const theirs = await device('ned');
    const theirSid = theirs.cookies.get('new_api_refresh')!.split('.')[0];
    const list = (await mine.get('/api/user/sessions')).json.data;
    assert.ok(!list.some((x: any) => x.sid === theirSid));
    const r = await mine.delete(`/api/user/sessions/${theirSid}`);
    assert.equal(r.status, 404);
    assert.equal(r.json.code, 'AUTH_SESSION_NOT_FOUND');
    assert.equal((await theirs.get('/api/user/sessions')).json.success, true);
    assert.equal((await mine.delete('/api/user/sessions/not-a-session')).status, 404);
  });

  test('revoking one device: it fails right afterwards, the caller keeps working', async () => {
    const keep = await device();
    const lose = await device();
    const sid = lose.cookies.get('new_api_refresh')!.split('.')[0];
    const r = await keep.delete(`/api/user/sessions/${sid}`);
    assert.deepEqual(r.json.data, { revoked_sid: sid, current: false });
    const after = await lose.get('/api/user/sessions');
    assert.equal(after.status, 401);
    assert.equal(after.json.code, 'AUTH_SESSION_REVOKED');
    assert.equal((await lose.post('/api/user/auth/refresh')).status, 401);
    assert.equal((await keep.get('/api/user/sessions')).json.success, true);
    assert.equal((await keep.delete(`/api/user/sessions/${sid}`)).status, 404, 'second revoke finds nothing');
  });

  test('revoking the current session reports current:true and clears the cookie', async () => {
    const b = await device();
    const sid = b.cookies.get('new_api_refresh')!.split('.')[0];
    const r = await b.delete(`/api/user/sessions/${sid}`);
    assert.equal(r.json.data.current, true);
    assert.ok(!b.cookies.has('new_api_refresh'));
  });

  test('revoke-others keeps the current session, revokes the rest, and repeats with 0', async () => {
    const others = [await device(), await device(), await device()];
    const me = await device();
    const r = await me.post('/api/user/sessions/revoke-others');
    assert.ok(r.json.data.revoked_count >= 3);
    for (const o of others) assert.equal((await o.get('/api/user/sessions')).status, 401);
    const list = (await me.get('/api/user/sessions')).json.data;
    assert.equal(list.length, 1);
    assert.equal(list[0].current, true);
    const again = await me.post('/api/user/sessions/revoke-others');
    assert.deepEqual(again.json.data, { revoked_count: 0 });
  });

  test('a personal access token cannot use the browser-session routes', async () => {
    const pat = s.browser();
    pat.accessToken = patToken;
    for (const r of [
      await pat.get('/api/user/sessions'),
      await pat.delete('/api/user/sessions/00000000-0000-4000-8000-000000000000'),
      await pat.post('/api/user/sessions/revoke-others'),
    ]) {
      assert.equal(r.status, 403);
      assert.equal(r.json.code, 'AUTH_SESSION_REQUIRED');
    }
    const bare = await s.browser().get('/api/user/sessions', { authorization: patToken });
    assert.equal(bare.json.code, 'AUTH_SESSION_REQUIRED');
  });

  test('unauthenticated and forged tokens get 401', async () => {
    assert.equal((await s.browser().get('/api/user/sessions')).json.code, 'AUTH_UNAUTHORIZED');
    const b = await device();
    const parts = b.accessToken!.split('.');
    const forged = s.browser();
    forged.accessToken = `${parts[0]}.${parts[1]}.${'A'.repeat(43)}`;
    assert.equal((await forged.get('/api/user/sessions')).json.code, 'AUTH_UNAUTHORIZED');
    const none = s.browser();
    none.accessToken = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${parts[1]}.`;
    assert.equal((await none.get('/api/user/sessions')).status, 401);
  });
});
