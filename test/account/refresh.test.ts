import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { Browser } from '../helpers/http.js';

const PASSWORD = 'refresh-test-password';

eachDatabase('A24 refresh', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { REFRESH_REUSE_GRACE_SECONDS: '2' } });
    await s.createUser('rita', PASSWORD);
  });
  after(() => s.close());

  async function loggedIn(): Promise<Browser> {
    const b = s.browser();
    const r = await b.login('rita', PASSWORD);
    assert.equal(r.json.success, true);
    return b;
  }
  const refresh = (b: Browser, headers?: Record<string, string>) => b.post('/api/user/auth/refresh', undefined, headers);

  test('normal refresh rotates the cookie and returns the bundle with no-store', async () => {
    const b = await loggedIn();
    const before = b.cookies.get('new_api_refresh');
    const r = await refresh(b);
    assert.equal(r.status, 200);
    assert.equal(r.json.success, true);
    assert.match(r.json.data.access_token, /^ey/);
    assert.equal(r.json.data.user.username, 'rita');
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const afterCookie = b.cookies.get('new_api_refresh');
    assert.ok(afterCookie && afterCookie !== before);
    assert.equal(afterCookie!.split('.')[0], before!.split('.')[0], 'same session id');
    b.accessToken = r.json.data.access_token;
    assert.equal((await b.get('/api/user/sessions')).json.success, true);
  });

  test('missing cookie: 401 and the cookie is cleared', async () => {
    const r = await refresh(s.browser());
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'AUTH_UNAUTHORIZED');
    assert.ok(r.setCookies.some((c) => /^new_api_refresh=;/.test(c)));
  });

  test('invalid or revoked cookie: 401 and cleared; unknown secret revokes nothing', async () => {
    const b = await loggedIn();
    const [sid] = b.cookies.get('new_api_refresh')!.split('.');
    const forged = s.browser();
    forged.cookies.set('new_api_refresh', `${sid}.${'A'.repeat(64)}`);
    const r = await refresh(forged);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'AUTH_UNAUTHORIZED');
    assert.ok(r.setCookies.some((c) => /^new_api_refresh=;/.test(c)));
    assert.equal((await refresh(b)).status, 200, 'the real session still works');
    await b.post('/api/user/auth/logout');
    const revoked = s.browser();
    revoked.cookies.set('new_api_refresh', 'not-a-token');
    assert.equal((await refresh(revoked)).status, 401);
  });

  test('session mismatch: 409, nothing rotated or cleared', async () => {
    const b = await loggedIn();
    const cookie = b.cookies.get('new_api_refresh');
    const r = await refresh(b, { 'x-auth-session': '00000000-0000-4000-8000-000000000000' });
    assert.equal(r.status, 409);
    assert.equal(r.json.code, 'AUTH_SESSION_MISMATCH');
    assert.equal(r.setCookies.length, 0);
    assert.equal(b.cookies.get('new_api_refresh'), cookie);
    const ok = await refresh(b, { 'x-auth-session': cookie!.split('.')[0] });
    assert.equal(ok.status, 200);
  });

  test('cross-origin refresh is refused with 403 and rotates nothing', async () => {
    const b = await loggedIn();
    const cookie = b.cookies.get('new_api_refresh');
    const attempts: Record<string, string>[] = [{ origin: 'https://evil.example' }, { origin: 'null' }, { origin: '', referer: 'https://evil.example/page' }];
    for (const headers of attempts) {
      const r = await refresh(b, headers);
      assert.equal(r.status, 403);
      assert.equal(r.json.code, 'AUTH_ORIGIN_FORBIDDEN');
    }
    const noOrigin = await b.request('POST', '/api/user/auth/refresh', { headers: { origin: '' } });
    assert.equal(noOrigin.status, 403);
    assert.equal(b.cookies.get('new_api_refresh'), cookie);
    const viaReferer = await refresh(b, { origin: '', referer: `${s.url}/console` });
    assert.equal(viaReferer.status, 200);
  });

  test('twenty tabs refreshing the same token at once all succeed with one successor, rotated once', async () => {
    const a = await loggedIn();
    const shared = a.cookies.get('new_api_refresh')!;
    const tabs = Array.from({ length: 20 }, () => {
      const tab = s.browser();
      tab.cookies.set('new_api_refresh', shared);
      return tab;
    });
    const replies = await Promise.all(tabs.map((t) => refresh(t)));
    assert.deepEqual(replies.map((r) => r.status), tabs.map(() => 200));
    const successors = new Set(tabs.map((t) => t.cookies.get('new_api_refresh')));
    assert.equal(successors.size, 1);
    assert.notEqual([...successors][0], shared);
    // The next refresh from any tab rotates normally: the session was rotated once, not twenty times.
    assert.equal((await refresh(tabs[7])).status, 200);
    assert.equal((await refresh(tabs[3])).status, 200, 'a tab one rotation behind, inside the window');
  });

  test('previous token inside the grace window returns the successor; after it, reuse revokes the session', async () => {
    const b = await loggedIn();
    const old = b.cookies.get('new_api_refresh')!;
    await refresh(b);
    const successor = b.cookies.get('new_api_refresh')!;
    const replay = s.browser();
    replay.cookies.set('new_api_refresh', old);
    const inGrace = await refresh(replay);
    assert.equal(inGrace.status, 200);
    assert.equal(replay.cookies.get('new_api_refresh'), successor);
    await new Promise((r) => setTimeout(r, 3100));
    const late = s.browser();
    late.cookies.set('new_api_refresh', old);
    const reuse = await refresh(late);
    assert.equal(reuse.status, 401);
    assert.equal(reuse.json.code, 'AUTH_SESSION_REVOKED');
    // The whole session is gone: the legitimate holder of the successor is logged out too.
    const legit = await refresh(b);
    assert.equal(legit.status, 401);
    assert.equal(legit.json.code, 'AUTH_SESSION_REVOKED');
  });

  /** Logs in and rotates `times` times; returns the browser and every token of the chain, oldest first. */
  async function rotated(times: number) {
    const b = await loggedIn();
    const chain = [b.cookies.get('new_api_refresh')!];
    for (let i = 0; i < times; i++) {
      assert.equal((await refresh(b)).status, 200);
      chain.push(b.cookies.get('new_api_refresh')!);
    }
    return { b, chain };
  }
  const present = (token: string) => {
    const other = s.browser();
    other.cookies.set('new_api_refresh', token);
    return refresh(other);
  };

  test('inside the grace window a token three rotations old answers with the current one and revokes nothing', async () => {
    const { b, chain } = await rotated(3);
    const r = await present(chain[0]);
    assert.equal(r.status, 200);
    assert.ok(r.setCookies.some((c) => c.startsWith(`new_api_refresh=${chain[3]};`)), 'the current token, not a new one');
    assert.equal((await refresh(b)).status, 200, 'the holder of the current token rotates as usual');
  });

  test('rotate three times, replay the first after the grace window: the session is revoked, every token refused', async () => {
    const { b, chain } = await rotated(3);
    await new Promise((r) => setTimeout(r, 3100));
    const reuse = await present(chain[0]);
    assert.equal(reuse.status, 401);
    assert.equal(reuse.json.code, 'AUTH_SESSION_REVOKED');
    const sid = chain[0].split('.')[0];
    const row = await s.ctx.database.db.selectFrom('user_sessions').selectAll().where('sid', '=', sid).executeTakeFirstOrThrow();
    assert.equal(row.status, 'revoked');
    assert.equal(row.revoked_reason, 'refresh_reuse');
    for (const token of chain) {
      const r = await present(token);
      assert.equal(r.status, 401);
      assert.equal(r.json.code, 'AUTH_SESSION_REVOKED');
    }
    assert.equal((await b.get('/api/user/sessions')).status, 401, 'its access token is refused too');
  });

  test('a stale token does not ride on a recent rotation: its own grace window counts, not the last one', async () => {
    const { b, chain } = await rotated(1);
    await new Promise((r) => setTimeout(r, 3100));
    assert.equal((await refresh(b)).status, 200, 'a fresh rotation opens a new window for the previous token only');
    const reuse = await present(chain[0]);
    assert.equal(reuse.status, 401, 'two rotations old and rotated away 3 s ago: reuse');
    assert.equal(reuse.json.code, 'AUTH_SESSION_REVOKED');
    assert.equal((await refresh(b)).status, 401, 'the family is revoked');
  });

  test('a forged secret in the shape of a later token revokes nothing', async () => {
    const { b, chain } = await rotated(1);
    const [sid, secret] = chain[1].split('.');
    const r = await present(`${sid}.${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'AUTH_UNAUTHORIZED');
    assert.equal((await refresh(b)).status, 200);
  });

  test('a logged-out session is refused with its current and its previous token', async () => {
    const { b, chain } = await rotated(1);
    assert.equal((await b.post('/api/user/auth/logout')).status, 200);
    for (const token of chain) {
      const r = await present(token);
      assert.equal(r.status, 401);
      assert.equal(r.json.code, 'AUTH_SESSION_REVOKED');
    }
  });

  test('an expired session cannot be refreshed', async () => {
    const b = await loggedIn();
    const sid = b.cookies.get('new_api_refresh')!.split('.')[0];
    await s.ctx.database.db.updateTable('user_sessions').set({ expires_at: 1 }).where('sid', '=', sid).execute();
    const r = await refresh(b);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'AUTH_SESSION_REVOKED');
  });

  test('a disabled user cannot refresh', async () => {
    const id = await s.createUser('frank', PASSWORD);
    const b = s.browser();
    await b.login('frank', PASSWORD);
    await s.services.users.setSecurity(id, { status: 2 });
    const r = await refresh(b);
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'AUTH_SESSION_REVOKED');
  });

  test('refresh tokens and access tokens never reach the log', async () => {
    const b = await loggedIn();
    const cookie = b.cookies.get('new_api_refresh')!;
    await refresh(b);
    const text = s.log.text();
    assert.ok(!text.includes(cookie.split('.')[1]));
    assert.ok(!text.includes(b.cookies.get('new_api_refresh')!.split('.')[1]));
    assert.ok(!text.includes(PASSWORD));
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
  });
});
