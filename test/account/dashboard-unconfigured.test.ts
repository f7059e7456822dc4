import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { ROLE } from '../../src/account/db.js';
import type { Browser } from '../helpers/http.js';

// What new-api's pages read of features this product does not have, answered as the reference answers
// while the feature is not configured: every page load of its dashboard calls /api/notice, the Wallet page
// the top-up options, affiliate code and subscriptions, the Users page the groups and the permission catalog.

eachDatabase('new-api dashboard: answers of features that are not configured', (v) => {
  let s: AccountServer;
  let customer: Browser;
  let admin: Browser;
  before(async () => {
    s = await startAccount(v);
    await s.createUser('nc-user', 'nc-user password!');
    await s.createUser('nc-admin', 'nc-admin password!', { role: ROLE.admin });
    customer = s.browser();
    await customer.login('nc-user', 'nc-user password!');
    admin = s.browser();
    await admin.login('nc-admin', 'nc-admin password!');
  });
  after(() => s.close());

  test('content pages and uptime: empty, for anyone', async () => {
    for (const path of ['/api/notice', '/api/about', '/api/home_page_content', '/api/user-agreement', '/api/privacy-policy']) {
      const r = await s.browser().get(path);
      assert.deepEqual(r.json, { success: true, message: '', data: '' }, path);
    }
    assert.deepEqual((await s.browser().get('/api/uptime/status')).json.data, []);
    // The Pricing page's model performance: none collected.
    assert.deepEqual((await s.browser().get('/api/perf-metrics/summary?hours=24')).json.data, { models: [] });
    assert.deepEqual((await customer.get('/api/perf-metrics?model=gpt-4o&hours=24')).json.data, { model_name: 'gpt-4o', groups: [] });
    assert.equal((await customer.get('/api/perf-metrics')).status, 400);
  });

  test('the Wallet page: no online payment but top-up codes, the own affiliate code, no subscriptions', async () => {
    const info = (await customer.get('/api/user/topup/info')).json.data;
    assert.equal(info.enable_online_topup, false);
    assert.equal(info.enable_stripe_topup, false);
    assert.equal(info.enable_redemption, true);
    assert.deepEqual(info.pay_methods, []);
    assert.deepEqual(info.amount_options, []);
    const aff = await customer.get('/api/user/aff');
    const row = await s.ctx.database.db.selectFrom('users').select('aff_code').where('username', '=', 'nc-user').executeTakeFirstOrThrow();
    assert.equal(aff.json.data, row.aff_code);
    assert.deepEqual((await customer.get('/api/subscription/plans')).json.data, []);
    assert.deepEqual((await customer.get('/api/subscription/self')).json.data, { billing_preference: 'wallet_only', subscriptions: [], all_subscriptions: [] });
    // The price of an amount, asked as it is typed: a business refusal (HTTP 200), which that page ignores.
    for (const path of ['/api/user/amount', '/api/user/stripe/amount']) {
      const price = await customer.post(path, { amount: 10 });
      assert.equal(price.status, 200, path);
      assert.equal(price.json.success, false);
      assert.equal(price.json.code, 'ONLINE_TOPUP_UNAVAILABLE');
    }
    // The API Keys page's create dialog (not /api/token/:id with id "auto-groups").
    assert.deepEqual((await customer.get('/api/token/auto-groups')).json, { success: true, message: '', data: { groups: [], max_count: 0 } });
    for (const path of ['/api/user/topup/info', '/api/user/aff', '/api/subscription/plans', '/api/subscription/self', '/api/token/auto-groups']) {
      assert.equal((await s.browser().get(path)).status, 401, path);
    }
  });

  test('the Users page: the groups in use with default, an empty permission catalog; admin only', async () => {
    await s.createUser('nc-vip', 'nc-vip password!');
    await s.ctx.database.db.updateTable('users').set({ group: 'vip' }).where('username', '=', 'nc-vip').execute();
    assert.deepEqual((await admin.get('/api/group/')).json.data, ['default', 'vip']);
    assert.deepEqual((await admin.get('/api/authz/catalog')).json.data, { resources: [], roles: [] });
    for (const path of ['/api/group/', '/api/authz/catalog']) {
      const r = await customer.get(path);
      assert.equal(r.status, 403, path);
      assert.equal(r.json.code, 'AUTH_INSUFFICIENT_PRIVILEGE');
    }
  });
});
