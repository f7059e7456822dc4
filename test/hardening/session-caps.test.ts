import assert from 'node:assert/strict';
import { test } from 'node:test';
import { POSTGRES_URL, variants } from '../helpers/services.js';
import { startTwoAccounts, type AccountServer } from '../helpers/account.js';

const PASSWORD = 'caps-hardening-password';
const LOGINS = 200;
const CAP = 50;
const pg = variants().find((v) => v.name === 'postgres');

/** Runs `body` on two account instances sharing a fresh PostgreSQL schema. */
async function twoInstances(env: Record<string, string>, body: (a: AccountServer, b: AccountServer) => Promise<void>) {
  const { a, b, close } = await startTwoAccounts(pg!, env);
  try {
    await body(a, b);
  } finally {
    await close();
  }
}

async function sessionsOf(s: AccountServer, userId: number) {
  const rows = await s.ctx.database.db.selectFrom('user_sessions').selectAll().where('user_id', '=', userId).execute();
  return rows.map((r) => ({ ...r, created_at: Number(r.created_at), last_active_at: Number(r.last_active_at) }));
}

if (!pg) {
  test('session caps on two PostgreSQL instances', { skip: `needs TEST_POSTGRES_URL (set: ${POSTGRES_URL ? 'yes' : 'no'}); CI sets it` }, () => {});
} else {
  test(`${LOGINS} concurrent logins over two instances, policy reject: exactly ${CAP} sessions, the rest refused`, async (t) => {
    await twoInstances({ USER_SESSION_ACTIVE_LIMIT: String(CAP), USER_SESSION_ISSUANCE_LIMIT: '10000' }, async (a, b) => {
      const id = await a.createUser('crowd', PASSWORD);
      const started = Date.now();
      const replies = await Promise.all(Array.from({ length: LOGINS }, (_, i) => (i % 2 ? b : a).browser().login('crowd', PASSWORD)));
      t.diagnostic(`${LOGINS} logins in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(replies.filter((r) => r.json?.success).length, CAP);
      assert.equal(replies.filter((r) => r.status === 409 && r.json?.code === 'AUTH_SESSION_LIMIT').length, LOGINS - CAP);
      const rows = await sessionsOf(a, id);
      assert.equal(rows.length, CAP, 'a refused login leaves no row');
      assert.equal(rows.filter((r) => r.status === 'active').length, CAP);
    });
  });

  test(`${LOGINS} concurrent logins over two instances, policy evict_oldest: exactly ${CAP} live, the least recently active evicted`, async (t) => {
    await twoInstances({ USER_SESSION_ACTIVE_LIMIT: String(CAP), USER_SESSION_ISSUANCE_LIMIT: '10000', USER_SESSION_LIMIT_POLICY: 'evict_oldest' }, async (a, b) => {
      const id = await a.createUser('crowd', PASSWORD);
      // CAP sessions from before, idle for an hour: they are the least recently active and must go first.
      const old = [];
      for (let i = 0; i < CAP; i++) {
        const browser = a.browser();
        assert.equal((await browser.login('crowd', PASSWORD)).json.success, true);
        old.push(browser.cookies.get('new_api_refresh')!.split('.')[0]);
      }
      const hourAgo = Math.floor(Date.now() / 1000) - 3600;
      await a.ctx.database.db.updateTable('user_sessions').set({ created_at: hourAgo, last_active_at: hourAgo }).execute();

      const started = Date.now();
      const browsers = Array.from({ length: LOGINS }, (_, i) => (i % 2 ? b : a).browser());
      const replies = await Promise.all(browsers.map((br) => br.login('crowd', PASSWORD)));
      t.diagnostic(`${LOGINS} logins in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.equal(replies.filter((r) => r.json?.success).length, LOGINS, 'evict_oldest never refuses');

      const rows = await sessionsOf(a, id);
      const live = rows.filter((r) => r.status === 'active');
      const evicted = rows.filter((r) => r.status === 'revoked');
      assert.equal(live.length, CAP);
      assert.equal(evicted.length, CAP + LOGINS - CAP);
      assert.ok(evicted.every((r) => r.revoked_reason === 'evicted_by_limit'));
      for (const sid of old) assert.ok(evicted.some((r) => r.sid === sid), 'an idle session from before survived');
      // Sessions are evicted least recently active first: none evicted is newer than one kept.
      const newestEvicted = Math.max(...evicted.map((r) => r.last_active_at));
      const oldestLive = Math.min(...live.map((r) => r.last_active_at));
      assert.ok(newestEvicted <= oldestLive, `evicted one active at ${newestEvicted}, kept one active at ${oldestLive}`);

      // What the database says is what the instances enforce: the live ones work on both, the rest are refused.
      let working = 0;
      for (const [i, br] of browsers.entries()) {
        const sid = br.cookies.get('new_api_refresh')!.split('.')[0];
        const status = (await br.get('/api/user/sessions')).status;
        assert.equal(status, live.some((r) => r.sid === sid) ? 200 : 401, `login ${i}`);
        if (status === 200) working++;
      }
      assert.equal(working, CAP);

      // The newest login is always kept.
      const last = b.browser();
      assert.equal((await last.login('crowd', PASSWORD)).json.success, true);
      assert.equal((await last.get('/api/user/sessions')).status, 200);
      assert.equal((await sessionsOf(a, id)).filter((r) => r.status === 'active').length, CAP);
    });
  });
}
