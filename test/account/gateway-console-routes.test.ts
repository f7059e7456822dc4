import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { accountOperations } from '../../src/account/app.js';
import { ROLE } from '../../src/account/db.js';
import type { Browser } from '../helpers/http.js';

// new-api's admin pages whose data lives in the gateway here (channels, models, system settings, system
// info, deployments): on the account service their routes answer 501 naming the gateway console, after
// the reference's authentication, instead of a bare 404.

/** What those pages call first when they open (paths as new-api's web/src sends them). */
const PAGE_LOADS: [page: string, path: string, code: string][] = [
  ['channels', '/api/channel/?p=1&page_size=20&id_sort=false&tag_mode=false', 'GATEWAY_CONSOLE_ONLY'],
  ['channels', '/api/prefill_group?type=model', 'GATEWAY_CONSOLE_ONLY'],
  ['models', '/api/models/?p=1&page_size=20', 'GATEWAY_CONSOLE_ONLY'],
  ['models', '/api/vendors/?page_size=1000', 'GATEWAY_CONSOLE_ONLY'],
  ['models', '/api/models/missing', 'GATEWAY_CONSOLE_ONLY'],
  ['system settings', '/api/option/', 'GATEWAY_CONSOLE_ONLY'],
  ['system settings', '/api/performance/stats', 'GATEWAY_CONSOLE_ONLY'],
  ['system settings', '/api/performance/logs', 'GATEWAY_CONSOLE_ONLY'],
  ['system settings', '/api/ratio_sync/channels', 'GATEWAY_CONSOLE_ONLY'],
  ['system settings', '/api/custom-oauth-provider/', 'ACCOUNT_CLI_ONLY'],
  ['system info', '/api/system-info/instances', 'GATEWAY_CONSOLE_ONLY'],
  ['system info', '/api/system-task/list', 'GATEWAY_CONSOLE_ONLY'],
  ['deployments', '/api/deployments/settings', 'GATEWAY_CONSOLE_ONLY'],
];

eachDatabase('new-api admin pages of the gateway console answer 501 on the account service', (v) => {
  let s: AccountServer;
  let customer: Browser;
  let admin: Browser;
  let root: Browser;
  before(async () => {
    s = await startAccount(v);
    const signed = async (name: string, role: number) => {
      await s.createUser(name, `${name} password!`, { role });
      const b = s.browser();
      assert.equal((await b.login(name, `${name} password!`)).json.success, true);
      return b;
    };
    customer = await signed('gc-user', ROLE.user);
    admin = await signed('gc-admin', ROLE.admin);
    root = await signed('gc-root', ROLE.root);
  });
  after(() => s.close());

  test('the pages\' first calls: 501 with a message naming the gateway console, in English and Chinese', async () => {
    for (const [page, path, code] of PAGE_LOADS) {
      const r = await root.get(path);
      assert.equal(r.status, 501, `${page} ${path}: ${r.text}`);
      assert.deepEqual(Object.keys(r.json).sort(), ['code', 'message', 'success']);
      assert.equal(r.json.success, false);
      assert.equal(r.json.code, code, path);
      assert.match(r.json.message, code === 'GATEWAY_CONSOLE_ONLY' ? /gateway console/ : /oauth add-provider/);
    }
    const zh = await root.get('/api/channel/', { 'accept-language': 'zh-CN' });
    assert.match(zh.json.message, /网关控制台/);
  });

  test('every such route: 401 anonymous, 403 below its role, 501 for its role; each one is in the manifest', async () => {
    const ops = accountOperations().filter((o) => o.spec.id.startsWith('AG'));
    assert.ok(ops.length >= 100, `${ops.length} routes`);
    for (const path of ['/api/channel/', '/api/channel/:id/key', '/api/option/', '/api/system-info/instances', '/api/models/:id', '/api/deployments/']) {
      assert.ok(ops.some((o) => o.spec.path === path), path);
    }
    const ids = new Set<number>();
    for (const op of ops) {
      const path = op.spec.path.replace(/:\w+/g, '7');
      const opts = op.spec.method === 'GET' || op.spec.method === 'DELETE' ? {} : { body: {} };
      const anonymous = await s.browser().request(op.spec.method, path, opts);
      assert.equal(anonymous.status, 401, `${op.spec.method} ${path}`);
      const below = await (op.spec.auth === 'root' ? admin : customer).request(op.spec.method, path, opts);
      assert.equal(below.status, 403, `${op.spec.method} ${path}`);
      assert.equal(below.json.code, 'AUTH_INSUFFICIENT_PRIVILEGE');
      const r = await (op.spec.auth === 'root' ? root : admin).request(op.spec.method, path, opts);
      assert.equal(r.status, 501, `${op.spec.method} ${path}: ${r.text}`);
      assert.match(r.json.code, /^(GATEWAY_CONSOLE_ONLY|ACCOUNT_CLI_ONLY)$/);
      assert.equal(op.state, 'placeholder');
      ids.add(Number(op.spec.id.slice(2)));
    }
    assert.equal(ids.size, ops.length);
  });

  test('GET /api/models (AP41) and the Models page\'s GET /api/models/ are one route with the same answer', async () => {
    for (const path of ['/api/models', '/api/models/']) {
      const r = await customer.get(path);
      assert.equal(r.status, 501, path);
      assert.equal(r.json.code, 'GATEWAY_CONSOLE_ONLY');
    }
  });
});
