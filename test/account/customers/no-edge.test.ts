import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../../helpers/services.js';
import { startAccount, type AccountServer } from '../../helpers/account.js';
import { operations } from '../../../src/contract/operations.js';
import { ROLE } from '../../../src/account/db.js';

// The dashboard's placeholders this API replaced keep their published ids (AP…); the admin routes are new (AS09–AS17, AS56, AS57).
const customerApi = operations.filter((o) => o.deployable === 'account' && /^(AP(0\d|1[0-3]|17|18|29|30|42)|AS(09|1[0-7]|5[67]))$/.test(o.id));

// An account service that cannot reach the edge (run alone, no edge URL): the customer API answers 503
// EDGE_UNAVAILABLE after its authentication, while sign-up, the profile and the admin list keep working.
eachDatabase('customer API without an edge', (v) => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount(v, { env: { QUOTA_FOR_NEW_USER: '250000' } });
    await s.createUser('boss', 'boss password 1', { role: ROLE.root });
  });
  after(() => s.close());

  test('the operations AP01–AP42, AS09–AS17, AS56 and AS57 are the 28 routes of the customer API', () => {
    assert.equal(customerApi.length, 28);
    assert.ok(customerApi.every((o) => o.addition));
  });

  test('registration succeeds with a starting balance configured; the edge being away is a warning', async () => {
    const r = await s.browser().post('/api/user/register', { username: 'fresh', password: 'fresh password 1' });
    assert.equal(r.json.success, true, r.text);
    const warning = s.log.lines.map((l) => JSON.parse(l)).find((l) => String(l.msg).startsWith('starting balance not granted'));
    assert.ok(warning, 'a warning names the missing grant');
    assert.equal(warning.amount, 250000);
    assert.ok(!s.log.text().includes('fresh password 1'));
    const b = s.browser();
    assert.equal((await b.login('fresh', 'fresh password 1')).json.success, true);
    const self = await b.get('/api/user/self');
    assert.equal(self.status, 200, self.text);
    assert.deepEqual([self.json.data.quota, self.json.data.used_quota, self.json.data.request_count], [0, 0, 0]);
  });

  test('every customer route answers 503 EDGE_UNAVAILABLE after its authentication; admin routes refuse customers first', async () => {
    const customer = s.browser();
    await customer.login('fresh', 'fresh password 1');
    const admin = s.browser();
    await admin.login('boss', 'boss password 1');
    const bodies: Record<string, unknown> = {
      AP04: undefined,
      AP05: { name: 'k' },
      AP06: { id: 1, name: 'k' },
      AP08: { ids: [1] },
      AP09: { ids: [1] },
      AP18: { key: 'abc' },
      AS11: { name: 'n', quota: 1, count: 1 },
      AS12: { id: 1, name: 'n', quota: 1 },
      AS17: { id: 1, quota: 5, reason: 'support ticket 7' },
    };
    for (const op of customerApi) {
      const path = op.path.replace(/:\w+/g, '1');
      const init = op.method === 'GET' || op.method === 'DELETE' ? {} : { body: bodies[op.id] ?? {} };
      const anonymous = await s.browser().request(op.method, path, init);
      if (op.auth === 'optional') assert.equal(anonymous.json.code, 'EDGE_UNAVAILABLE', `${op.id} ${anonymous.text}`);
      else assert.equal(anonymous.status, 401, `${op.id} ${anonymous.text}`);
      const caller = op.auth === 'admin' ? admin : customer;
      if (op.auth === 'admin') {
        const refused = await customer.request(op.method, path, init);
        assert.equal(refused.status, 403, `${op.id} ${refused.text}`);
        assert.equal(refused.json.code, 'AUTH_INSUFFICIENT_PRIVILEGE');
      }
      const r = await caller.request(op.method, path, init);
      assert.equal(r.status, 503, `${op.id} ${op.method} ${path}: ${r.text}`);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, 'EDGE_UNAVAILABLE', op.id);
    }
  });

  test('the admin user list shows zero balances without the edge', async () => {
    const admin = s.browser();
    await admin.login('boss', 'boss password 1');
    const r = await admin.get('/api/user/?page_size=100');
    assert.equal(r.status, 200, r.text);
    for (const u of r.json.data.items) assert.deepEqual([u.quota, u.used_quota, u.request_count], [0, 0, 0]);
  });
});
