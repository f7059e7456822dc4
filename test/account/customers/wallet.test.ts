import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { eachDatabase, freshDatabase, tempDir, type Variant } from '../../helpers/services.js';
import { Browser } from '../../helpers/http.js';
import { captureLog } from '../../helpers/log-capture.js';
import { SESSION_SECRET } from '../../helpers/account.js';
import { loadConfig } from '../../../src/config/index.js';
import { createRuntime } from '../../../src/runtime.js';
import { buildServices } from '../../../src/services.js';
import { customerOwnerName } from '../../../src/contract/customer.js';
import { ROLE } from '../../../src/account/db.js';
import { eachPlacement, startCustomerStack, type CustomerStack } from './stack.js';

const STARTING_BALANCE = 1234;

// The wallet beside an account user: the admin's quota edit (AS17, audited on the edge with a reason, rank
// rules of the admin list), the balances in the profile and the admin list, the starting balance of a new user.
eachPlacement('customer API: wallets', (v, apart) => {
  let c: CustomerStack;
  const balanceOf = async (b: Browser) => {
    const d = (await b.get('/api/user/self')).json.data;
    return [d.quota, d.used_quota, d.request_count];
  };

  before(async () => {
    c = await startCustomerStack(v, { apart, accountEnv: { QUOTA_FOR_NEW_USER: String(STARTING_BALANCE) } });
  });
  after(() => c.close());

  test('PUT /api/user/ sets a balance with a reason, audited on the edge; the profile and the admin list show it', async () => {
    const alice = await c.customer('alice');
    const r = await c.root.request('PUT', '/api/user/', { body: { id: alice.id, quota: 5000, reason: 'ticket 42: refund' } });
    assert.deepEqual(r.json, { success: true, message: '', data: { id: alice.id, quota: 5000, used_quota: 0, request_count: 0 } });
    assert.deepEqual(await balanceOf(alice.b), [5000, 0, 0]);
    const row = (await c.root.get('/api/user/?page_size=100')).json.data.items.find((u: any) => u.id === alice.id);
    assert.deepEqual([row.quota, row.used_quota, row.request_count], [5000, 0, 0]);
    assert.equal((await c.root.get(`/api/user/${alice.id}`)).json.data.quota, 5000);
    const audit = await c.st.edge.ctx.db.selectFrom('edge_audit').selectAll().where('operation', '=', 'wallet.adjust').orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(audit.actor, `account:${c.rootId}`);
    assert.equal(JSON.parse(audit.detail).reason, 'ticket 42: refund');
    assert.ok(c.account.log.lines.some((l) => l.includes('"audit":"user.quota"') && l.includes(`"target_id":${alice.id}`)));
    // A lower balance is one more movement.
    assert.equal((await c.root.request('PUT', '/api/user/', { body: { id: alice.id, quota: 1500, reason: 'correction' } })).json.data.quota, 1500);
    assert.deepEqual(await balanceOf(alice.b), [1500, 0, 0]);
  });

  test('the quota edit needs a reason and a quota, refuses a password, and changes nothing when refused', async () => {
    const bob = await c.customer('bob');
    await c.root.request('PUT', '/api/user/', { body: { id: bob.id, quota: 700, reason: 'start' } });
    const refused = [
      { id: bob.id, quota: 9000 },
      { id: bob.id, quota: 9000, reason: '   ' },
      { id: bob.id, quota: 9000, reason: 'x'.repeat(201) },
      { id: bob.id, reason: 'no quota' },
      { id: bob.id, quota: -1, reason: 'negative' },
      { id: bob.id, quota: 9000, reason: 'with a password', password: 'new password 1', username: 'bob' },
    ];
    for (const body of refused) {
      const r = await c.root.request('PUT', '/api/user/', { body });
      assert.deepEqual([r.status, r.json.success, r.json.code], [200, false, 'CUSTOMER_INVALID'], JSON.stringify(body));
    }
    for (const body of [{ id: 'x', quota: 1, reason: 'r' }, { quota: 1, reason: 'r' }, { id: bob.id, quota: '5', reason: 'r' }]) {
      assert.equal((await c.root.request('PUT', '/api/user/', { body })).json.code, 'INVALID_PARAMETERS', JSON.stringify(body));
    }
    assert.deepEqual(await balanceOf(bob.b), [700, 0, 0]);
    // Below what running calls hold: refused by the edge, nothing moves.
    const owner = await c.st.edge.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', customerOwnerName(bob.id)).executeTakeFirstOrThrow();
    await c.st.edge.ctx.db.updateTable('edge_wallets').set({ reserved: 300 }).where('owner_id', '=', owner.id).execute();
    const low = await c.root.request('PUT', '/api/user/', { body: { id: bob.id, quota: 100, reason: 'too low' } });
    assert.deepEqual([low.status, low.json.code], [200, 'QUOTA_BELOW_RESERVED']);
    await c.st.edge.ctx.db.updateTable('edge_wallets').set({ reserved: 0 }).where('owner_id', '=', owner.id).execute();
    assert.deepEqual(await balanceOf(bob.b), [700, 0, 0]);
  });

  test('rank rules: an admin sets a customer\'s balance but not another admin\'s; a customer is refused', async () => {
    const carol = await c.customer('carol');
    await c.account.createUser('ada', 'ada password 1', { role: ROLE.admin });
    const alanId = await c.account.createUser('alan', 'alan password 1', { role: ROLE.admin });
    const ada = c.account.browser();
    await ada.login('ada', 'ada password 1');
    assert.equal((await ada.request('PUT', '/api/user/', { body: { id: carol.id, quota: 10, reason: 'by an admin' } })).json.data.quota, 10);
    for (const id of [alanId, c.rootId]) {
      const r = await ada.request('PUT', '/api/user/', { body: { id, quota: 10, reason: 'not allowed' } });
      assert.equal(r.json.code, 'USER_OUTRANKED');
    }
    assert.equal((await ada.request('PUT', '/api/user/', { body: { id: 999_999, quota: 10, reason: 'nobody' } })).json.code, 'USER_NOT_FOUND');
    const self = await carol.b.request('PUT', '/api/user/', { body: { id: carol.id, quota: 1_000_000, reason: 'free money' } });
    assert.deepEqual([self.status, self.json.code], [403, 'AUTH_INSUFFICIENT_PRIVILEGE']);
    assert.deepEqual(await balanceOf(carol.b), [10, 0, 0]);
    assert.equal((await c.holder.port!.balance(alanId)).quota, 0);
  });

  test('a user who registers gets QUOTA_FOR_NEW_USER once', async () => {
    const r = await c.account.browser().post('/api/user/register', { username: 'newbie', password: 'newbie password 1' });
    assert.equal(r.json.success, true, r.text);
    const b = c.account.browser();
    await b.login('newbie', 'newbie password 1');
    const id = (await b.get('/api/user/self')).json.data.id;
    assert.deepEqual(await balanceOf(b), [STARTING_BALANCE, 0, 0]);
    // A retry of the grant (same credit id) adds nothing.
    await c.holder.port!.grant(id, STARTING_BALANCE, `signup:${id}`, 'system:signup', 'retry');
    assert.deepEqual(await balanceOf(b), [STARTING_BALANCE, 0, 0]);
    // Users made by an operator (CLI) get no starting balance.
    const made = await c.customer('made');
    assert.deepEqual(await balanceOf(made.b), [0, 0, 0]);
  });
});

/** The services of one process as src/main.ts builds them (src/services.ts), on the variant's databases. */
async function startProcess(v: Variant, env: Record<string, string>) {
  const dataDir = tempDir();
  const dbs = ['account', 'edge'].map((name) => freshDatabase(v, `${dataDir}/${name}.sqlite`));
  const config = loadConfig({
    DATA_DIR: dataDir,
    SERVICES: 'account,edge',
    ACCOUNT_DATABASE_URL: dbs[0]!.url,
    EDGE_DATABASE_URL: dbs[1]!.url,
    SESSION_SECRET,
    CRITICAL_RATE_LIMIT_ENABLED: 'false',
    ...env,
  });
  const runtime = createRuntime(config, captureLog().stream);
  const built = await buildServices(config, runtime);
  const account = built.find((b) => b.service === 'account')!.app;
  await account.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(account.server.address() as { port: number }).port}`,
    async close() {
      await Promise.all(built.map((b) => b.app.close()));
      await runtime.close();
      for (const db of dbs) await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

eachDatabase('customer API in one process (src/services.ts)', (v) => {
  test('the account reaches the edge built after it: the starting balance and a token', async () => {
    const p = await startProcess(v, { QUOTA_FOR_NEW_USER: '500' });
    try {
      const b = new Browser(p.url);
      assert.equal((await b.post('/api/user/register', { username: 'solo', password: 'solo password 1' })).json.success, true);
      await b.login('solo', 'solo password 1');
      assert.equal((await b.get('/api/user/self')).json.data.quota, 500);
      const t = await b.post('/api/token/', { name: 'first', expired_time: -1, remain_quota: 0, unlimited_quota: true });
      assert.equal(t.json.success, true, t.text);
      assert.equal((await b.get('/api/token/')).json.data.total, 1);
    } finally {
      await p.close();
    }
  });
});
