import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount } from '../helpers/account.js';

const PASSWORD = 'caps-test-password';

async function activeCount(s: Awaited<ReturnType<typeof startAccount>>, userId: number) {
  const r = await s.ctx.database.db
    .selectFrom('user_sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

eachDatabase('session caps', (v) => {
  test('200 concurrent logins with a cap of 50 leave exactly 50 active sessions', async () => {
    const s = await startAccount(v, { env: { USER_SESSION_ACTIVE_LIMIT: '50', USER_SESSION_ISSUANCE_LIMIT: '1000' } });
    try {
      const id = await s.createUser('busy', PASSWORD);
      const results = await Promise.all(Array.from({ length: 200 }, () => s.browser().login('busy', PASSWORD)));
      const ok = results.filter((r) => r.json.success);
      const capped = results.filter((r) => r.json.code === 'AUTH_SESSION_LIMIT');
      assert.equal(ok.length, 50);
      assert.equal(capped.length, 150);
      for (const r of capped) {
        assert.equal(r.status, 409);
        assert.notEqual(r.json.code, 'LOGIN_FAILED', 'a cap is never shown as a wrong password');
      }
      assert.equal(await activeCount(s, id), 50);
    } finally {
      await s.close();
    }
  });

  test('issuance window cap answers 429 and counts revoked sessions too', async () => {
    const s = await startAccount(v, { env: { USER_SESSION_ISSUANCE_LIMIT: '3', USER_SESSION_ISSUANCE_WINDOW_SECONDS: '3600' } });
    try {
      await s.createUser('churn', PASSWORD);
      for (let i = 0; i < 3; i++) {
        const b = s.browser();
        assert.equal((await b.login('churn', PASSWORD)).json.success, true);
        await b.post('/api/user/auth/logout');
      }
      const r = await s.browser().login('churn', PASSWORD);
      assert.equal(r.status, 429);
      assert.equal(r.json.code, 'AUTH_SESSION_ISSUANCE_LIMIT');
      const wrong = await s.browser().login('churn', 'not the password');
      assert.equal(wrong.json.code, 'LOGIN_FAILED', 'the password is checked before the caps');
    } finally {
      await s.close();
    }
  });

  test('evict_oldest revokes the least recently active session instead of refusing', async () => {
    const s = await startAccount(v, { env: { USER_SESSION_ACTIVE_LIMIT: '2', USER_SESSION_LIMIT_POLICY: 'evict_oldest' } });
    try {
      const id = await s.createUser('evicted', PASSWORD);
      const first = s.browser();
      await first.login('evicted', PASSWORD);
      await new Promise((r) => setTimeout(r, 1100));
      const second = s.browser();
      await second.login('evicted', PASSWORD);
      const third = s.browser();
      assert.equal((await third.login('evicted', PASSWORD)).json.success, true);
      assert.equal(await activeCount(s, id), 2);
      assert.equal((await first.get('/api/user/sessions')).status, 401, 'oldest evicted at once');
      assert.equal((await second.get('/api/user/sessions')).json.success, true);
    } finally {
      await s.close();
    }
  });
});
