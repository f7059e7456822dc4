import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postgresWithRedis } from '../helpers/services.js';
import { startTwoAccounts, type AccountServer } from '../helpers/account.js';

const PASSWORD = 'multi-instance-password';
const pgVariant = postgresWithRedis('two instances sharing PostgreSQL + Redis');

if (pgVariant) {
  let a: AccountServer;
  let b: AccountServer;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await startTwoAccounts(pgVariant, {
      CRITICAL_RATE_LIMIT_ENABLED: 'true',
      CRITICAL_RATE_LIMIT: '6',
      CRITICAL_RATE_LIMIT_DURATION: '60',
      REDIS_KEY_PREFIX: `mi${process.pid}${Date.now()}:`,
    }));
    await a.services.users.insertUser({ username: 'shared', password: PASSWORD });
  });
  after(async () => {
    await a.ctx.limiter.reset('critical:127.0.0.1');
    await close();
  });

  test('a session revoked on instance A stops working on instance B within 1 second', async () => {
    await a.ctx.limiter.reset('critical:127.0.0.1');
    const loginA = a.browser();
    const r = await loginA.login('shared', PASSWORD);
    assert.equal(r.json.success, true);
    const onB = b.browser();
    onB.accessToken = loginA.accessToken;
    assert.equal((await onB.get('/api/user/sessions')).json.success, true, 'B caches the live session');
    const other = a.browser();
    await other.login('shared', PASSWORD);
    const sid = loginA.cookies.get('new_api_refresh')!.split('.')[0];
    const revokedAt = Date.now();
    await other.delete(`/api/user/sessions/${sid}`);
    let refusedAfter = -1;
    while (Date.now() - revokedAt < 1000) {
      const res = await onB.get('/api/user/sessions');
      if (res.status === 401) {
        refusedAfter = Date.now() - revokedAt;
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.ok(refusedAfter >= 0 && refusedAfter < 1000, `B refused the revoked session after ${refusedAfter} ms`);
  });

  test('the critical rate limit is shared across instances through Redis', async () => {
    await a.ctx.limiter.reset('critical:127.0.0.1');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const server = i % 2 === 0 ? a : b;
      const r = await server.browser().login('shared', 'wrong password here');
      statuses.push(r.status);
      if (r.status === 429) {
        assert.equal(r.json.code, 'RATE_LIMITED');
        assert.ok(Number(r.headers.get('retry-after')) > 0);
      }
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429]);
  });
}
