import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GATEWAY_PERMISSIONS } from '../../src/config/index.js';
import { gatewayOperations } from '../../src/gateway/app.js';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

const ops = gatewayOperations();
const ALL = [...GATEWAY_PERMISSIONS];

function pathOf(path: string) {
  return path.replace(/:id\b/g, '999999').replace(/:(\w+)/g, 'x');
}

function call(c: StaffClient, method: string, path: string) {
  return c.request(method, pathOf(path), method === 'GET' || method === 'DELETE' ? undefined : {});
}

eachDatabase('gateway permission matrix', (v) => {
  let s: GatewayServer;
  before(async () => {
    s = await startGateway(v);
  });
  after(() => s.close());

  test('every operation answers 401 without a token or with a bad one', async () => {
    const bad = s.client('gwst_' + 'A'.repeat(43));
    const garbage = s.client('not-a-token');
    for (const { spec } of ops) {
      for (const c of [s.anonymous(), bad, garbage]) {
        const r = await call(c, spec.method, spec.path);
        assert.equal(r.status, 401, `${spec.id} ${spec.method} ${spec.path}`);
        assert.equal(r.json.code, 'GW_UNAUTHORIZED');
      }
    }
  });

  test('revoked and expired tokens are refused', async () => {
    await s.services.staff.create('temp', 'root');
    const { token } = await s.services.staff.issueToken('temp');
    const c = s.client(token);
    assert.equal((await c.get('/api/channel/')).status, 200);
    assert.equal(await s.services.staff.revokeToken(token), true);
    assert.equal((await c.get('/api/channel/')).status, 401);
    const expiring = await s.services.staff.issueToken('temp', 1);
    await s.ctx.db.updateTable('staff_tokens').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('expires_at', 'is not', null).execute();
    assert.equal((await s.client(expiring.token).get('/api/channel/')).status, 401);
  });

  test('an identity lacking each permission gets 403 exactly where the registry names it', async () => {
    const checked = new Set<string>();
    for (const permission of ALL) {
      // An admin holding every other permission explicitly, and a service identity likewise.
      const others = ALL.filter((p) => p !== permission);
      const admin = await s.staff(`adm-no-${permission}`, 'admin', { grant: others, deny: [permission] });
      const service = await s.staff(`svc-no-${permission}`, 'service', { grant: others });
      const holder = await s.staff(`svc-only-${permission}`, 'service', { grant: [permission] });
      for (const { spec } of ops.filter((o) => o.spec.permission === permission)) {
        for (const c of [admin, service]) {
          const r = await call(c, spec.method, spec.path);
          assert.equal(r.status, 403, `${spec.id} without ${permission}`);
          assert.equal(r.json.code, 'GW_FORBIDDEN', spec.id);
        }
        const r = await call(holder, spec.method, spec.path);
        assert.ok(r.status !== 401 && r.status !== 403, `${spec.id} with ${permission} answered ${r.status} ${r.text}`);
        checked.add(spec.id);
      }
    }
    assert.ok(checked.size >= 40, `checked ${checked.size} permission-bearing operations`);
  });

  test('root-class operations refuse admins holding every permission; admin-class ones refuse services', async () => {
    const admin = await s.staff('adm-all', 'admin', { grant: ALL });
    const service = await s.staff('svc-all', 'service', { grant: ALL });
    const root = await s.staff('root1', 'root');
    for (const { spec } of ops) {
      if (spec.auth === 'root') {
        for (const c of [admin, service]) {
          const r = await call(c, spec.method, spec.path);
          assert.equal(r.status, 403, spec.id);
          assert.equal(r.json.code, 'GW_ROOT_REQUIRED', spec.id);
        }
        const r = await call(root, spec.method, spec.path);
        assert.ok(!['GW_ROOT_REQUIRED', 'GW_FORBIDDEN', 'GW_UNAUTHORIZED'].includes(r.json?.code), `${spec.id} as root: ${r.text}`);
      } else if (!spec.permission) {
        const r = await call(service, spec.method, spec.path);
        assert.equal(r.status, 403, spec.id);
        assert.equal(r.json.code, 'GW_STAFF_REQUIRED', spec.id);
        const a = await call(admin, spec.method, spec.path);
        assert.ok(a.status !== 401 && a.status !== 403, `${spec.id} as admin: ${a.text}`);
      }
    }
  });

  test('admin defaults: Read, Operate and Write but not SensitiveWrite or TaskPluginBind', async () => {
    const admin = await s.staff('plain-admin', 'admin');
    assert.equal((await admin.get('/api/channel/')).status, 200);
    assert.equal((await admin.post('/api/channel/', { mode: 'single', channel: { key: 'k' } })).json.code, 'GW_FORBIDDEN');
    assert.equal((await admin.get('/api/task_plugin_options')).json.code, 'GW_FORBIDDEN');
    await s.services.staff.setPermission('plain-admin', 'authz.ChannelRead', 'deny');
    assert.equal((await admin.get('/api/channel/')).status, 403);
  });
});

eachDatabase('gateway admin permission mapping from GATEWAY_ADMIN_PERMISSIONS', (v) => {
  let s: GatewayServer;
  before(async () => {
    s = await startGateway(v, { env: { GATEWAY_ADMIN_PERMISSIONS: 'authz.ChannelRead' } });
  });
  after(() => s.close());

  test('an admin gets only the configured permissions', async () => {
    const admin = await s.staff('a', 'admin');
    assert.equal((await admin.get('/api/channel/')).status, 200);
    assert.equal((await admin.post('/api/channel/fix')).json.code, 'GW_FORBIDDEN');
  });
});
