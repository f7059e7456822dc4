import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

// Staff administration over the API (GS06–GS15): what the staff/token/service/audit CLI commands do, for
// root only, with a TOTP step-up (GS01 scope StaffSecret) before a secret is answered, the refusals that
// keep a root from locking itself out, and an audit row for every write without any secret in it.

const codeNow = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();

eachDatabase('gateway staff API (GS06–GS15)', (v) => {
  let s: GatewayServer;
  let boss: StaffClient;
  let bossSecret: string;
  let bossId: number;
  const secrets: string[] = [];
  let adminId = 0;
  let serviceId = 0;

  /** A fresh StaffSecret proof of boss (its last TOTP step reset, so the current code is accepted again). */
  async function proof(scope = 'StaffSecret', client = boss, name = 'boss', secret = bossSecret): Promise<string> {
    await s.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).where('name', '=', name).execute();
    const r = await client.post('/api/staff/verify', { code: codeNow(secret), scope, ...(scope === 'StaffSecret' ? {} : { context: { channel_id: 1 } }) });
    assert.equal(r.status, 200, r.text);
    return r.json.data.proof_token;
  }
  /**
   * Later proofs straight from the proof service: GS01 allows five codes per staff member in five minutes, and
   * the HTTP step-up is exercised above (scope StaffSecret without context, a key-reveal proof refused).
   */
  const issuedProof = async () => (await s.services.proofs.issue(bossId, 'StaffSecret', 0)).proof_token;
  const listed = async () => (await boss.get('/api/staff')).json.data;
  const entry = async (id: number) => (await listed()).items.find((x: any) => x.id === id);
  const auditRows = async (q = '') => (await boss.get(`/api/staff/audit${q}`)).json.data;

  before(async () => {
    s = await startGateway(v);
    boss = await s.staff('boss', 'root');
    secrets.push(boss.token!);
    bossSecret = (await s.services.staff.enrollTotp('boss')).secret;
    secrets.push(bossSecret);
    bossId = (await s.services.staff.byName('boss')).id;
  });
  after(async () => {
    // No token or TOTP secret in the log, in the audit table, or in any answer but the one that issued it.
    const log = s.log.text();
    const auditText = JSON.stringify(await s.ctx.db.selectFrom('gateway_audit').selectAll().execute());
    const answers = s.transcript.filter((t) => !t.includes('"token":"gwst_') && !t.includes('"secret":'));
    for (const secret of secrets) {
      assert.ok(!log.includes(secret), 'a secret in the log');
      assert.ok(!auditText.includes(secret), 'a secret in the audit log');
      assert.ok(!answers.join('\n').includes(secret), 'a secret in another answer');
    }
    await s.close();
  });

  test('GS06/GS07: list and create staff and service identities; bad input has clear codes', async () => {
    const first = await listed();
    assert.equal(first.self_id, bossId);
    const me = first.items.find((x: any) => x.id === bossId);
    assert.equal(me.role, 'root');
    assert.equal(me.totp_enrolled, true);
    assert.equal(me.live_tokens, 1);

    const admin = await boss.post('/api/staff', { name: 'ops', kind: 'staff', role: 'admin' });
    assert.equal(admin.status, 200, admin.text);
    adminId = admin.json.data.id;
    assert.equal(admin.json.data.role, 'admin');
    assert.deepEqual(admin.json.data.permissions, [...s.ctx.config.gateway.adminPermissions].sort());
    const svc = await boss.post('/api/staff', { name: 'feeder', kind: 'service', permissions: ['authz.ChannelRead'] });
    assert.equal(svc.status, 200, svc.text);
    serviceId = svc.json.data.id;
    assert.deepEqual([svc.json.data.kind, svc.json.data.role, svc.json.data.granted, svc.json.data.live_tokens], ['service', 'service', ['authz.ChannelRead'], 0]);
    assert.equal((await boss.post('/api/staff', { name: 'root2', kind: 'staff', role: 'root' })).status, 200);

    assert.equal((await boss.post('/api/staff', { name: 'ops', kind: 'staff', role: 'admin' })).json.code, 'STAFF_NAME_TAKEN');
    assert.equal((await boss.post('/api/staff', { name: 'bad name!', kind: 'staff', role: 'admin' })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.post('/api/staff', { name: 'x', kind: 'staff' })).json.code, 'STAFF_INVALID');
    assert.equal((await boss.post('/api/staff', { name: 'x', kind: 'service', permissions: ['authz.Nope'] })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.post('/api/staff', { name: 'x', kind: 'staff', role: 'root', permissions: ['authz.ChannelRead'] })).json.code, 'STAFF_ROOT_HAS_ALL');
    assert.equal((await boss.post('/api/staff', { name: 'x', kind: 'robot' })).status, 400);
    assert.equal((await listed()).items.length, 4, 'nothing written by the refused requests');
  });

  test('every operation is root only: an admin gets 403 GW_ROOT_REQUIRED, no token 401', async () => {
    const ops = await s.staff('ops-helper', 'admin', { grant: ['authz.ChannelSensitiveWrite', 'authz.TaskPluginBind'] });
    const calls: Array<[string, string]> = [
      ['GET', '/api/staff'],
      ['POST', '/api/staff'],
      ['PUT', `/api/staff/${adminId}/status`],
      ['PUT', `/api/staff/${adminId}/permissions`],
      ['GET', `/api/staff/${adminId}/tokens`],
      ['POST', `/api/staff/${adminId}/tokens`],
      ['DELETE', '/api/staff/tokens/1'],
      ['DELETE', `/api/staff/${adminId}/tokens`],
      ['POST', `/api/staff/${adminId}/totp`],
      ['GET', '/api/staff/audit'],
    ];
    for (const [method, path] of calls) {
      const body = method === 'POST' || method === 'PUT' ? {} : undefined;
      const r = await ops.request(method, path, body);
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.json.code, 'GW_ROOT_REQUIRED');
      assert.equal((await s.anonymous().request(method, path, body)).status, 401);
    }
  });

  test('GS09: grant, deny and clear a permission, read back and enforced; root and self are refused', async () => {
    const ops = await s.staff('ops-reader', 'admin');
    const opsId = (await s.services.staff.byName('ops-reader')).id;
    assert.equal((await ops.get('/api/channel/')).status, 200);
    const deny = await boss.put(`/api/staff/${opsId}/permissions`, { permission: 'authz.ChannelRead', effect: 'deny' });
    assert.equal(deny.status, 200, deny.text);
    assert.deepEqual((await entry(opsId)).denied, ['authz.ChannelRead']);
    assert.ok(!(await entry(opsId)).permissions.includes('authz.ChannelRead'));
    assert.equal((await ops.get('/api/channel/')).status, 403);
    await boss.put(`/api/staff/${opsId}/permissions`, { permission: 'authz.ChannelRead', effect: 'clear' });
    assert.deepEqual((await entry(opsId)).denied, []);
    assert.equal((await ops.get('/api/channel/')).status, 200);
    await boss.put(`/api/staff/${opsId}/permissions`, { permission: 'authz.TaskPluginBind', effect: 'grant' });
    assert.deepEqual((await entry(opsId)).granted, ['authz.TaskPluginBind']);

    assert.equal((await boss.put(`/api/staff/${bossId}/permissions`, { permission: 'authz.ChannelRead', effect: 'deny' })).json.code, 'STAFF_SELF_PERMISSION');
    const root2 = (await s.services.staff.byName('root2')).id;
    assert.equal((await boss.put(`/api/staff/${root2}/permissions`, { permission: 'authz.ChannelRead', effect: 'deny' })).json.code, 'STAFF_ROOT_HAS_ALL');
    assert.equal((await boss.put(`/api/staff/${opsId}/permissions`, { permission: 'authz.Everything', effect: 'grant' })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.put(`/api/staff/${opsId}/permissions`, { permission: 'authz.ChannelRead', effect: 'maybe' })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.put('/api/staff/99999/permissions', { permission: 'authz.ChannelRead', effect: 'grant' })).json.code, 'STAFF_NOT_FOUND');
  });

  test('GS11: a token is issued only with a fresh StaffSecret proof, once; the proof is single-use', async () => {
    const none = await boss.post(`/api/staff/${adminId}/tokens`, {});
    assert.equal(none.status, 403);
    assert.equal(none.json.code, 'GW_PROOF_REQUIRED');
    const keyProof = await proof('channel.key.read');
    assert.equal((await boss.post(`/api/staff/${adminId}/tokens`, {}, { 'x-security-proof': keyProof })).json.code, 'GW_PROOF_INVALID', 'a key-reveal proof does not issue tokens');

    const p = await proof();
    const issued = await boss.post(`/api/staff/${adminId}/tokens`, { ttl_seconds: 3600 }, { 'x-security-proof': p });
    assert.equal(issued.status, 200, issued.text);
    assert.equal(issued.headers.get('cache-control'), 'no-store');
    const { token, token_id, expires_at } = issued.json.data;
    secrets.push(token);
    assert.match(token, /^gwst_/);
    assert.ok(expires_at > Date.now() / 1000 + 3500);
    assert.equal((await s.client(token).get('/api/channel/')).status, 200);
    const again = await boss.post(`/api/staff/${adminId}/tokens`, {}, { 'x-security-proof': p });
    assert.equal(again.json.code, 'GW_PROOF_INVALID', 'a proof is single-use');

    const tokens = await boss.get(`/api/staff/${adminId}/tokens`);
    assert.equal(tokens.status, 200);
    assert.deepEqual(tokens.json.data.map((t: any) => t.id), [token_id]);
    assert.deepEqual(Object.keys(tokens.json.data[0]).sort(), ['created_at', 'expires_at', 'id']);
    assert.ok(!tokens.text.includes(token));

    // A service identity's token (what `service create` prints).
    const svcToken = await boss.post(`/api/staff/${serviceId}/tokens`, {}, { 'x-security-proof': await issuedProof() });
    secrets.push(svcToken.json.data.token);
    assert.equal((await s.client(svcToken.json.data.token).get('/api/channel/')).status, 200);
    assert.equal((await entry(serviceId)).live_tokens, 1);
  });

  test('a root without TOTP is told how to enroll; GS14 enrolls TOTP with a QR code and the new secret verifies', async () => {
    const root2 = s.client((await s.services.staff.issueToken('root2')).token);
    secrets.push(root2.token!);
    const root2Id = (await s.services.staff.byName('root2')).id;
    const r = await root2.post(`/api/staff/${adminId}/tokens`, {}, { 'x-security-proof': 'whatever' });
    assert.equal(r.status, 403);
    assert.equal(r.json.code, 'STAFF_STEP_UP_NOT_ENROLLED');
    assert.match(r.json.message, /npm run cli -- staff totp --name root2/);
    const zh = await root2.post(`/api/staff/${root2Id}/totp`, {}, { 'accept-language': 'zh-CN' });
    assert.match(zh.json.message, /登记/);

    assert.equal((await boss.post(`/api/staff/${root2Id}/totp`)).json.code, 'GW_PROOF_REQUIRED');
    assert.equal((await boss.post(`/api/staff/${serviceId}/totp`, {}, { 'x-security-proof': 'x' })).json.code, 'STAFF_SERVICE_NO_TOTP');
    const enrolled = await boss.post(`/api/staff/${root2Id}/totp`, {}, { 'x-security-proof': await issuedProof() });
    assert.equal(enrolled.status, 200, enrolled.text);
    assert.equal(enrolled.headers.get('cache-control'), 'no-store');
    const { secret, otpauth_uri, qr_code_data } = enrolled.json.data;
    secrets.push(secret);
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match(otpauth_uri, /^otpauth:\/\/totp\/.*root2.*secret=/);
    assert.match(qr_code_data, /^data:image\/png;base64,/);
    assert.equal((await entry(root2Id)).totp_enrolled, true);
    // root2 can now step up itself.
    const own = await proof('StaffSecret', root2, 'root2', secret);
    const issued = await root2.post(`/api/staff/${root2Id}/tokens`, {}, { 'x-security-proof': own });
    assert.equal(issued.status, 200, issued.text);
    secrets.push(issued.json.data.token);
  });

  test('GS12/GS13: revoke one token or all; a root cannot revoke its own last token or all of its own', async () => {
    const live = (await boss.get(`/api/staff/${adminId}/tokens`)).json.data;
    const t2 = await boss.post(`/api/staff/${adminId}/tokens`, {}, { 'x-security-proof': await issuedProof() });
    secrets.push(t2.json.data.token);
    const r = await boss.delete(`/api/staff/tokens/${live[0].id}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual((await boss.get(`/api/staff/${adminId}/tokens`)).json.data.map((t: any) => t.id), [t2.json.data.token_id]);
    assert.equal((await boss.delete(`/api/staff/tokens/${live[0].id}`)).json.code, 'STAFF_TOKEN_NOT_FOUND');
    const all = await boss.delete(`/api/staff/${adminId}/tokens`);
    assert.deepEqual(all.json.data, { revoked: 1 });
    assert.equal((await s.client(t2.json.data.token).get('/api/channel/')).status, 401);

    const mine = (await boss.get(`/api/staff/${bossId}/tokens`)).json.data;
    assert.equal(mine.length, 1);
    const last = await boss.delete(`/api/staff/tokens/${mine[0].id}`);
    assert.equal(last.status, 409);
    assert.equal(last.json.code, 'STAFF_SELF_LAST_TOKEN');
    assert.equal((await boss.delete(`/api/staff/${bossId}/tokens`)).json.code, 'STAFF_SELF_LAST_TOKEN');
    // With a second token of its own, boss may revoke the first.
    const spare = await boss.post(`/api/staff/${bossId}/tokens`, {}, { 'x-security-proof': await issuedProof() });
    secrets.push(spare.json.data.token);
    assert.equal((await boss.delete(`/api/staff/tokens/${mine[0].id}`)).status, 200);
    boss = s.client(spare.json.data.token);
    assert.equal((await boss.get('/api/staff')).status, 200);
  });

  test('GS08: disable and enable; a disabled identity cannot authenticate or get tokens; self-disable refused', async () => {
    const t = await boss.post(`/api/staff/${serviceId}/tokens`, {}, { 'x-security-proof': await issuedProof() });
    secrets.push(t.json.data.token);
    const off = await boss.put(`/api/staff/${serviceId}/status`, { disabled: true });
    assert.deepEqual(off.json.data, { id: serviceId, disabled: true });
    assert.equal((await entry(serviceId)).disabled, true);
    assert.equal((await s.client(t.json.data.token).get('/api/channel/')).status, 401);
    assert.equal((await boss.post(`/api/staff/${serviceId}/tokens`, {}, { 'x-security-proof': 'x' })).json.code, 'STAFF_DISABLED');
    await boss.put(`/api/staff/${serviceId}/status`, { disabled: false });
    assert.equal((await entry(serviceId)).disabled, false);
    assert.equal((await s.client(t.json.data.token).get('/api/channel/')).status, 200);

    const self = await boss.put(`/api/staff/${bossId}/status`, { disabled: true });
    assert.equal(self.status, 409);
    assert.equal(self.json.code, 'STAFF_SELF_DISABLE');
    assert.equal((await boss.put(`/api/staff/${bossId}/status`, {})).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.put('/api/staff/0/status', { disabled: true })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await boss.put('/api/staff/424242/status', { disabled: true })).json.code, 'STAFF_NOT_FOUND');
  });

  test('GS15: every write is audited with the caller as actor; filters by action, actor, channel and time; paging', async () => {
    const page = await auditRows('?page_size=200');
    const ops = page.items.map((r: any) => r.operation);
    for (const op of ['GS07', 'GS08', 'GS09', 'GS11', 'GS12', 'GS13', 'GS14']) assert.ok(ops.includes(op), `${op} audited`);
    const ids = page.items.map((r: any) => r.id);
    assert.deepEqual(ids, [...ids].sort((a: number, b: number) => b - a), 'newest first');
    const created = await auditRows('?action=GS07');
    assert.equal(created.total, 3);
    assert.ok(created.items.every((r: any) => r.operation === 'GS07' && r.actor_name === 'boss' && r.actor_id === bossId));
    assert.deepEqual(created.items.map((r: any) => r.detail.name).sort(), ['feeder', 'ops', 'root2']);
    const issued = (await auditRows('?action=GS11')).items;
    assert.ok(issued.every((r: any) => typeof r.detail.token_id === 'number' && !('token' in r.detail)));
    assert.ok((await auditRows('?actor=root2')).items.every((r: any) => r.actor_name === 'root2'));
    assert.equal((await auditRows('?actor=root2&action=GS11')).total, 1);
    assert.equal((await auditRows('?actor=nobody')).total, 0);

    await s.ctx.db.insertInto('gateway_audit').values({ actor_id: bossId, actor_name: 'boss', operation: 'G10', channel_id: 7, detail: '{}', created_at: 1000 } as never).execute();
    const byChannel = await auditRows('?channel_id=7');
    assert.deepEqual([byChannel.total, byChannel.items[0].operation], [1, 'G10']);
    assert.equal((await auditRows('?end_time=2000')).total, 1);
    assert.equal((await auditRows('?start_time=2000')).total, page.total);
    const p1 = await auditRows('?page_size=2&p=1');
    const p2 = await auditRows('?page_size=2&p=2');
    assert.equal(p1.items.length, 2);
    assert.equal(p2.page, 2);
    assert.ok(p2.items[0].id < p1.items[1].id);
    assert.equal((await boss.get('/api/staff/audit?page_size=0')).json.code, 'INVALID_PARAMETERS');
  });
});
