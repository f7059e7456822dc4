import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import type { Browser } from '../helpers/http.js';
import { ROLE, USER_STATUS } from '../../src/account/db.js';
import { enrolTotp } from './twofactor-helpers.js';

// The admin user list and management (AS05–AS08, additions): paging, search, the reference's role rules,
// disabling ends the user's sessions, customers get 403, bad input gets its code, no secret in any answer.
eachDatabase('admin user list (AS05-AS08)', (v) => {
  let s: AccountServer;
  let root: Browser;
  let admin: Browser;
  const ids: Record<string, number> = {};
  before(async () => {
    s = await startAccount(v);
    ids.root = await s.createUser('boss', 'boss password 1', { role: ROLE.root });
    ids.admin = await s.createUser('ada', 'ada password 1', { role: ROLE.admin, email: 'ada@example.com' });
    ids.admin2 = await s.createUser('alan', 'alan password 1', { role: ROLE.admin });
    for (let i = 1; i <= 12; i++) ids[`u${i}`] = await s.createUser(`member${i}`, `member${i} password`, { email: `m${i}@Example.org` });
    ids.weird = await s.createUser('pct_50%', 'weird password 1');
    root = s.browser();
    await root.login('boss', 'boss password 1');
    admin = s.browser();
    await admin.login('ada', 'ada password 1');
  });
  after(() => s.close());

  test('AS05 pages newest first with new-api\'s p and page_size; rows carry factors and no secrets', async () => {
    const { secret } = await enrolTotp(s, 'member3', 'member3 password');
    const first = await admin.get('/api/user/?p=1&page_size=5');
    assert.equal(first.status, 200, first.text);
    const d = first.json.data;
    assert.deepEqual([d.page, d.page_size, d.total], [1, 5, 16]);
    assert.deepEqual(d.items.map((u: any) => u.username), ['pct_50%', 'member12', 'member11', 'member10', 'member9']);
    const last = (await admin.get('/api/user/?p=4&page_size=5')).json.data;
    assert.deepEqual(last.items.map((u: any) => u.username), ['boss']);
    assert.equal((await admin.get('/api/user/?p=9')).json.data.items.length, 0);
    assert.equal((await admin.get('/api/user')).json.data.page_size, 10);

    const all = (await admin.get('/api/user/?page_size=100')).json.data.items;
    const m3 = all.find((u: any) => u.username === 'member3');
    assert.deepEqual(Object.keys(m3).sort(), ['created_at', 'display_name', 'email', 'group', 'id', 'last_login_at', 'passkey_count', 'quota', 'request_count', 'role', 'status', 'twofa_enabled', 'used_quota', 'username']);
    assert.equal(m3.twofa_enabled, true);
    assert.ok(m3.last_login_at > 0, 'enrolling signed member3 in');
    assert.equal(all.find((u: any) => u.username === 'member4').twofa_enabled, false);
    assert.equal(all.find((u: any) => u.username === 'member4').last_login_at, 0);
    assert.equal(all.find((u: any) => u.username === 'ada').role, ROLE.admin);
    const text = (await admin.get('/api/user/?page_size=100')).text;
    for (const leak of ['password_hash', 'access_token', 'secret_sealed', secret, '$argon2']) assert.ok(!text.includes(leak), leak);
  });

  test('AS06 searches id, username, email and display name (case and wildcards literal); role and status filters', async () => {
    const names = async (q: string) => (await admin.get(`/api/user/search?${q}`)).json.data.items.map((u: any) => u.username);
    assert.deepEqual(await names('keyword=member1'), ['member12', 'member11', 'member10', 'member1']);
    assert.deepEqual(await names('keyword=EXAMPLE.COM'), ['ada']);
    // A numeric keyword is the id, or a part of a name (member10 contains "10").
    const byId = await names(`keyword=${ids.u7}`);
    assert.ok(byId.includes('member7'), String(byId));
    assert.ok(byId.every((n: string) => n === 'member7' || n.includes(String(ids.u7))), String(byId));
    assert.deepEqual(await names('keyword=50%25'), ['pct_50%']);
    assert.deepEqual(await names('keyword=_'), ['pct_50%']);
    assert.deepEqual(await names(`role=${ROLE.admin}`), ['alan', 'ada']);
    const paged = (await admin.get('/api/user/search?keyword=member&p=2&page_size=5')).json.data;
    assert.deepEqual([paged.total, paged.items.length, paged.page], [12, 5, 2]);
    assert.deepEqual(await names('keyword=nobody-here'), []);
  });

  test('bad input answers INVALID_PARAMETERS; a customer gets 403; AS07 needs to outrank', async () => {
    for (const q of ['/api/user/?p=0', '/api/user/?page_size=101', '/api/user/?p=abc', `/api/user/search?keyword=${'x'.repeat(101)}`, '/api/user/search?role=x']) {
      const r = await admin.get(q);
      assert.equal(r.status, 400, q);
      assert.equal(r.json.code, 'INVALID_PARAMETERS', q);
    }
    for (const body of [{ id: ids.u1, action: 'add_quota' }, { id: 0, action: 'disable' }, { action: 'disable' }, { id: 'x', action: 'enable' }]) {
      const r = await admin.post('/api/user/manage', body);
      assert.equal(r.json.code, 'INVALID_PARAMETERS', JSON.stringify(body));
    }
    const customer = s.browser();
    await customer.login('member5', 'member5 password');
    for (const r of [await customer.get('/api/user/'), await customer.get('/api/user/search?keyword=a'), await customer.get(`/api/user/${ids.u1}`), await customer.post('/api/user/manage', { id: ids.u1, action: 'disable' })]) {
      assert.equal(r.status, 403);
      assert.equal(r.json.code, 'AUTH_INSUFFICIENT_PRIVILEGE');
    }
    const one = await admin.get(`/api/user/${ids.u2}`);
    assert.equal(one.json.data.username, 'member2');
    assert.equal(one.json.data.passkey_count, 0);
    assert.equal((await admin.get(`/api/user/${ids.admin2}`)).json.code, 'USER_OUTRANKED');
    assert.equal((await admin.get('/api/user/999999')).json.code, 'USER_NOT_FOUND');
    assert.equal((await admin.get('/api/user/abc')).status, 400);
    assert.equal((await root.get(`/api/user/${ids.admin2}`)).json.data.role, ROLE.admin);
  });

  test('AS08 disable ends every session at once; enable lets the user in again; audit line, no secrets', async () => {
    const victim = s.browser();
    await victim.login('member6', 'member6 password');
    const other = s.browser();
    await other.login('member6', 'member6 password');
    assert.equal((await victim.get('/api/user/sessions')).status, 200);
    const r = await admin.post('/api/user/manage', { id: ids.u6, action: 'disable' });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual(r.json.data, { id: ids.u6, role: ROLE.user, status: USER_STATUS.disabled });
    assert.equal((await victim.get('/api/user/sessions')).status, 401);
    assert.notEqual((await other.post('/api/user/auth/refresh')).status, 200);
    const stored = await s.ctx.database.db.selectFrom('user_sessions').select(['status', 'revoked_reason']).where('user_id', '=', ids.u6).execute();
    assert.ok(stored.length >= 2 && stored.every((x) => x.status === 'revoked' && x.revoked_reason === 'admin_disabled'));
    assert.equal((await s.browser().login('member6', 'member6 password')).json.success, false);
    assert.equal((await admin.get(`/api/user/${ids.u6}`)).json.data.status, USER_STATUS.disabled);
    assert.deepEqual((await admin.get(`/api/user/search?status=${USER_STATUS.disabled}`)).json.data.items.map((u: any) => u.username), ['member6']);

    const en = await admin.post('/api/user/manage', { id: ids.u6, action: 'enable' });
    assert.equal(en.json.data.status, USER_STATUS.enabled);
    assert.equal((await s.browser().login('member6', 'member6 password')).json.success, true);
    const line = s.log.lines.map((l) => JSON.parse(l)).find((l: any) => l.audit === 'user.manage' && l.target_id === ids.u6 && l.action === 'disable');
    assert.ok(line, 'audit line');
    assert.equal(line.admin_id, ids.admin);
    assert.ok(!s.log.text().includes('member6 password'));
  });

  test('AS08 role rules: outrank, root-only promote, root protected, nobody acts on themselves', async () => {
    const code = async (b: Browser, id: number, action: string) => (await b.post('/api/user/manage', { id, action })).json.code ?? 'OK';
    assert.equal(await code(admin, ids.admin2, 'disable'), 'USER_OUTRANKED');
    assert.equal(await code(admin, ids.root, 'disable'), 'USER_OUTRANKED');
    assert.equal(await code(admin, ids.admin, 'disable'), 'USER_MANAGE_SELF');
    assert.equal(await code(root, ids.root, 'disable'), 'USER_MANAGE_SELF');
    assert.equal(await code(admin, ids.u8, 'promote'), 'USER_PROMOTE_ROOT_ONLY');
    assert.equal(await code(admin, ids.u8, 'demote'), 'USER_ALREADY_COMMON');
    assert.equal(await code(admin, 999999, 'enable'), 'USER_NOT_FOUND');
    assert.equal((await admin.post('/api/user/manage', { id: ids.admin2, action: 'disable' })).status, 403);

    const second = await s.createUser('boss2', 'boss2 password 1', { role: ROLE.root });
    assert.equal(await code(root, second, 'disable'), 'USER_ROOT_PROTECTED');
    assert.equal(await code(root, second, 'demote'), 'USER_ROOT_PROTECTED');
    assert.equal(await code(root, second, 'promote'), 'USER_ALREADY_ADMIN');

    const promoted = s.browser();
    await promoted.login('member8', 'member8 password');
    const p = await root.post('/api/user/manage', { id: ids.u8, action: 'promote' });
    assert.equal(p.json.data.role, ROLE.admin, p.text);
    assert.equal((await promoted.get('/api/user/sessions')).status, 401, 'a role change ends the sessions');
    const asAdmin = s.browser();
    await asAdmin.login('member8', 'member8 password');
    assert.equal((await asAdmin.get('/api/user/')).status, 200);
    const d = await root.post('/api/user/manage', { id: ids.u8, action: 'demote' });
    assert.equal(d.json.data.role, ROLE.user);
    assert.equal((await asAdmin.get('/api/user/')).status, 401);
    const again = s.browser();
    await again.login('member8', 'member8 password');
    assert.equal((await again.get('/api/user/')).status, 403);
  });

  test('Chinese messages for the new codes', async () => {
    const r = await admin.post('/api/user/manage', { id: ids.admin, action: 'disable' }, { 'accept-language': 'zh-CN' });
    assert.equal(r.json.message, '不能在此管理自己的账户');
  });
});
