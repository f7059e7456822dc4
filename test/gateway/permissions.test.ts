import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GATEWAY_PERMISSIONS } from '../../src/config/gateway.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/config/read.js';
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
    // The relay's internal API (auth class workload) has its own tests: test/gateway/relay-auth.test.ts.
    for (const { spec } of ops.filter((o) => o.spec.auth !== 'workload')) {
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
      } else if (spec.auth === 'admin' && !spec.permission) {
        const r = await call(service, spec.method, spec.path);
        assert.equal(r.status, 403, spec.id);
        assert.equal(r.json.code, 'GW_STAFF_REQUIRED', spec.id);
        const a = await call(admin, spec.method, spec.path);
        assert.ok(a.status !== 401 && a.status !== 403, `${spec.id} as admin: ${a.text}`);
      }
    }
  });

  test('admin operations SPEC gives no permission (prefill groups, deployments, G60) follow a denial of the one they are scoped by', async () => {
    const scoped = ops.filter((o) => o.spec.operatorPermission);
    assert.ok(scoped.length >= 24, `${scoped.length} scoped operations`);
    for (const permission of new Set(scoped.map((o) => o.spec.operatorPermission!))) {
      const denied = await s.staff(`adm-scoped-no-${permission}`, 'admin', { grant: ALL.filter((p) => p !== permission), deny: [permission] });
      const holder = await s.staff(`adm-scoped-${permission}`, 'admin', { grant: [permission], deny: ALL.filter((p) => p !== permission) });
      for (const { spec } of scoped.filter((o) => o.spec.operatorPermission === permission)) {
        const r = await call(denied, spec.method, spec.path);
        assert.equal(r.status, 403, `${spec.id} without ${permission}: ${r.text}`);
        assert.equal(r.json.code, 'GW_FORBIDDEN', spec.id);
        assert.match(r.json.message, new RegExp(permission.replace('.', '\\.')), spec.id);
        const ok = await call(holder, spec.method, spec.path);
        assert.ok(ok.status !== 401 && ok.status !== 403, `${spec.id} with only ${permission} answered ${ok.status} ${ok.text}`);
      }
    }
    // The issue's case: an admin whose channel write is denied creates no prefill group and no deployment.
    const noWrite = await s.staff('adm-no-write', 'admin', { deny: ['authz.ChannelWrite'] });
    assert.equal((await noWrite.post('/api/prefill_group/', { name: 'g', type: 'model', items: ['m'] })).json.code, 'GW_FORBIDDEN');
    assert.equal((await noWrite.post('/api/deployments/', {})).json.code, 'GW_FORBIDDEN');
    assert.equal((await noWrite.get('/api/prefill_group/')).status, 200, 'reading stays with ChannelRead');
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

eachDatabase('gateway operation permissions from GATEWAY_OPERATION_PERMISSIONS', (v) => {
  let s: GatewayServer;
  before(async () => {
    s = await startGateway(v, { env: { GATEWAY_OPERATION_PERMISSIONS: 'G42=authz.ChannelSensitiveWrite, G79=none' } });
  });
  after(() => s.close());

  test('an override replaces the default scope; none leaves the operation to any staff identity', async () => {
    const admin = await s.staff('a', 'admin', { deny: ['authz.ChannelWrite'] });
    const r = await admin.post('/api/deployments/', {});
    assert.equal(r.json.code, 'GW_FORBIDDEN');
    assert.match(r.json.message, /authz\.ChannelSensitiveWrite/);
    const created = await admin.post('/api/prefill_group/', { name: 'g', type: 'model', items: ['m'] });
    assert.ok(created.status !== 401 && created.status !== 403, created.text);
    assert.equal((await admin.delete('/api/prefill_group/1')).json.code, 'GW_FORBIDDEN', 'G81 keeps its default');
    const service = await s.staff('svc', 'service', { grant: ALL });
    assert.equal((await service.post('/api/prefill_group/', { name: 'h', type: 'model', items: ['m'] })).json.code, 'GW_STAFF_REQUIRED');
  });

  test('bad entries fail start-up naming the variable', () => {
    for (const value of ['G01=authz.ChannelRead', 'G42', 'G42=authz.Nope', 'G42=']) {
      assert.throws(() => loadConfig({ GATEWAY_OPERATION_PERMISSIONS: value }), (e: unknown) => e instanceof ConfigError && /GATEWAY_OPERATION_PERMISSIONS/.test((e as Error).message), value);
    }
    assert.deepEqual(loadConfig({ GATEWAY_OPERATION_PERMISSIONS: 'G41=none' }).gateway.operationPermissions, { G41: null });
  });
});
