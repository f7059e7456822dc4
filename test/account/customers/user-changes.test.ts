import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../../helpers/services.js';
import type { Browser } from '../../helpers/http.js';
import { ROLE } from '../../../src/account/db.js';
import { chat, startCustomerStack, type CustomerStack } from './stack.js';

const TOKEN = { name: 'sdk', expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };
const STARTING = 1000;

// An admin's changes of a user beyond AS08 (the account console's Users page): create (AS18, the reference's
// CreateUser with its rank rule and the starting balance), a generated password (AS19) or a single-use reset
// link (AS21), the group (AS20), and
// AS08's soft delete, which also deletes the user's API keys on the edge.
eachDatabase('admin user changes (AS18-AS21, AS08 delete)', (v) => {
  let c: CustomerStack;
  let admin: Browser;
  let adminId: number;

  before(async () => {
    c = await startCustomerStack(v, { accountEnv: { QUOTA_FOR_NEW_USER: String(STARTING) } });
    adminId = await c.account.createUser('ada', 'ada password 1', { role: ROLE.admin });
    admin = c.account.browser();
    await admin.login('ada', 'ada password 1');
  });
  after(() => c.close());

  const code = (r: { json: any }) => r.json.code ?? 'OK';

  test('AS18 creates a user below the creator\'s role, with the starting balance; bad input and ranks refused', async () => {
    const r = await admin.post('/api/user/', { username: ' newbie ', password: 'newbie password 1', display_name: 'New Bie' });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual({ ...r.json.data, id: 0 }, { id: 0, username: 'newbie', display_name: 'New Bie', role: ROLE.user });
    const b = c.account.browser();
    assert.equal((await b.login('newbie', 'newbie password 1')).json.success, true);
    const self = (await b.get('/api/user/self')).json.data;
    assert.deepEqual([self.display_name, self.role, self.quota], ['New Bie', ROLE.user, STARTING]);

    assert.equal(code(await admin.post('/api/user/', { username: 'second', password: 'second password 1', role: ROLE.admin })), 'USER_CREATE_ROLE');
    const made = await c.root.post('/api/user/', { username: 'second', password: 'second password 1', role: ROLE.admin });
    assert.equal(made.json.data.role, ROLE.admin, made.text);
    assert.equal(code(await c.root.post('/api/user/', { username: 'third', password: 'third password 1', role: ROLE.root })), 'USER_CREATE_ROLE');
    for (const body of [{ password: 'lonely password 1' }, { username: 'a b', password: 'space password 1' }, { username: 'x'.repeat(21), password: 'long password 1' }, { username: 'weak', password: '123' }, { username: 'odd', password: 'odd password 1', role: 5 }, { username: 'named', password: 'named password 1', display_name: 'y'.repeat(21) }]) {
      assert.equal(code(await admin.post('/api/user/', body)), 'USER_INPUT_INVALID', JSON.stringify(body));
    }
    assert.equal(code(await admin.post('/api/user/', { username: 'newbie', password: 'another password 1' })), 'USERNAME_TAKEN');
    assert.equal((await admin.post('/api/user/', { username: 7, password: 'x' })).status, 400);
    const customer = (await c.customer('carl')).b;
    const refused = await customer.post('/api/user/', { username: 'sneaky', password: 'sneaky password 1' });
    assert.deepEqual([refused.status, code(refused)], [403, 'AUTH_INSUFFICIENT_PRIVILEGE']);
    const line = c.account.log.lines.map((l) => JSON.parse(l)).find((l: any) => l.audit === 'user.create' && l.target_username === 'newbie');
    assert.equal(line?.admin_id, adminId);
    assert.ok(!c.everything().includes('newbie password 1'));
  });

  test('AS19 gives a generated password once: the old one stops, every session ends; ranks and self refused', async () => {
    const { b, id } = await c.customer('dora');
    const r = await admin.post(`/api/user/${id}/password`);
    assert.equal(r.json.success, true, r.text);
    const password = r.json.data.password as string;
    assert.match(password, /^[A-Za-z0-9]{12}$/);
    assert.equal((await b.get('/api/user/self')).status, 401, 'the user\'s sessions end');
    assert.equal((await c.account.browser().login('dora', 'dora password 1')).json.success, false);
    assert.equal((await c.account.browser().login('dora', password)).json.success, true);
    assert.equal(code(await admin.post(`/api/user/${adminId}/password`)), 'USER_MANAGE_SELF');
    assert.equal(code(await admin.post(`/api/user/${c.rootId}/password`)), 'USER_OUTRANKED');
    assert.equal(code(await admin.post('/api/user/999999/password')), 'USER_NOT_FOUND');
    assert.equal((await c.root.post(`/api/user/${adminId}/password`)).json.success, true, 'root resets an admin');
    await admin.login('ada', (await c.root.post(`/api/user/${adminId}/password`)).json.data.password);
    assert.ok(!c.account.log.text().includes(password), 'the password is never logged');
    assert.ok(c.account.log.lines.some((l) => l.includes('"audit":"user.password_reset"') && l.includes(`"target_id":${id}`)));
  });

  test('AS21 gives a single-use reset link: nothing changes until the user chooses a password on it; then every session ends', async () => {
    const { b, id } = await c.customer('lina');
    const r = await admin.post(`/api/user/${id}/password/link`);
    assert.equal(r.json.success, true, r.text);
    const link = new URL(r.json.data.link);
    assert.equal(link.pathname, '/user/reset');
    assert.equal(link.searchParams.get('user'), String(id));
    const token = link.searchParams.get('token')!;
    assert.ok(r.json.data.expires_at > Date.now() / 1000);
    assert.equal((await b.get('/api/user/self')).status, 200, 'the link changes nothing by itself');
    const anonymous = c.account.browser();
    assert.equal(code(await anonymous.post('/api/user/reset', { user: id, token: 'x'.repeat(token.length), password: 'lina chosen pass 2' })), 'RESET_LINK_INVALID');
    assert.equal(code(await anonymous.post('/api/user/reset', { user: adminId, token, password: 'lina chosen pass 2' })), 'RESET_LINK_INVALID', 'another user\'s id');
    assert.equal(code(await anonymous.post('/api/user/reset', { email: 'lina', token, password: 'lina chosen pass 2' })), 'RESET_LINK_INVALID', 'not a mailed token');
    const used = await anonymous.post('/api/user/reset', { user: id, token, password: 'lina chosen pass 2' });
    assert.equal(used.json.success, true, used.text);
    assert.equal((await b.get('/api/user/self')).status, 401, 'the user\'s sessions end');
    assert.equal((await c.account.browser().login('lina', 'lina password 1')).json.success, false);
    assert.equal((await c.account.browser().login('lina', 'lina chosen pass 2')).json.success, true);
    assert.equal(code(await anonymous.post('/api/user/reset', { user: id, token, password: 'lina other pass 3' })), 'RESET_LINK_INVALID', 'single use');
    // A new link replaces the previous one.
    const first = new URL((await admin.post(`/api/user/${id}/password/link`)).json.data.link).searchParams.get('token');
    await admin.post(`/api/user/${id}/password/link`);
    assert.equal(code(await anonymous.post('/api/user/reset', { user: id, token: first, password: 'lina other pass 3' })), 'RESET_LINK_INVALID');
    assert.equal(code(await admin.post(`/api/user/${adminId}/password/link`)), 'USER_MANAGE_SELF');
    assert.equal(code(await admin.post(`/api/user/${c.rootId}/password/link`)), 'USER_OUTRANKED');
    const refused = await (await c.customer('nosy')).b.post(`/api/user/${id}/password/link`);
    assert.equal(refused.json?.success, false, refused.text);
    assert.ok(!c.account.log.text().includes(token), 'the link is never logged');
    assert.ok(c.account.log.lines.some((l) => l.includes('"audit":"user.password_reset_link"') && l.includes(`"target_id":${id}`)));
  });

  test('AS20 moves a user to a group (AS07 and the prices show it); a bad name or an outranking target refused', async () => {
    const { b, id } = await c.customer('gina');
    const r = await admin.request('PUT', `/api/user/${id}/group`, { body: { group: 'vip' } });
    assert.deepEqual(r.json.data, { id, group: 'vip' }, r.text);
    assert.equal((await admin.get(`/api/user/${id}`)).json.data.group, 'vip');
    assert.equal((await b.get('/api/user/self')).json.data.group, 'vip', 'sessions stay');
    assert.deepEqual(Object.keys((await b.get('/api/user/self/groups')).json.data), ['vip']);
    for (const group of ['', 'a b', 'x'.repeat(65)]) assert.equal(code(await admin.request('PUT', `/api/user/${id}/group`, { body: { group } })), 'USER_INPUT_INVALID', group);
    assert.equal(code(await admin.request('PUT', `/api/user/${c.rootId}/group`, { body: { group: 'vip' } })), 'USER_OUTRANKED');
  });

  test('AS08 delete: the user\'s keys stop at the edge, sessions end, sign-in and reads fail; root and self protected', async () => {
    const { b, id } = await c.customer('eve');
    assert.equal((await c.root.request('PUT', '/api/user/', { body: { id, quota: 100_000, reason: 'test credit' } })).json.success, true);
    const keys = [] as string[];
    for (let i = 0; i < 3; i++) keys.push((await b.post('/api/token/', { ...TOKEN, name: `k${i}` })).json.data.key);
    assert.equal((await chat(c.st, keys[0]!)).status, 200);
    const r = await admin.post('/api/user/manage', { id, action: 'delete' });
    assert.equal(r.json.success, true, r.text);
    for (const key of keys) assert.equal((await chat(c.st, key)).status, 401, 'a deleted user\'s key is refused');
    assert.equal((await b.get('/api/user/self')).status, 401);
    assert.equal((await c.account.browser().login('eve', 'eve password 1')).json.success, false);
    assert.equal(code(await admin.get(`/api/user/${id}`)), 'USER_NOT_FOUND');
    assert.ok(!(await admin.get('/api/user/?page_size=100')).json.data.items.some((u: any) => u.id === id));
    assert.equal(code(await admin.post('/api/user/manage', { id, action: 'delete' })), 'USER_NOT_FOUND');
    assert.equal(code(await admin.post('/api/user/', { username: 'eve', password: 'new eve password 1' })), 'USERNAME_TAKEN', 'the name stays taken');
    // Usage rows still name the deleted user.
    assert.ok((await c.root.get('/api/log/?username=eve&type=2')).json.data.items.length >= 1);
    assert.equal(code(await admin.post('/api/user/manage', { id: adminId, action: 'delete' })), 'USER_MANAGE_SELF');
    assert.equal(code(await c.root.post('/api/user/manage', { id: c.rootId, action: 'delete' })), 'USER_MANAGE_SELF');
    const otherRoot = await c.account.createUser('root2', 'root2 password 1', { role: ROLE.root });
    assert.equal(code(await c.root.post('/api/user/manage', { id: otherRoot, action: 'delete' })), 'USER_ROOT_PROTECTED');
    assert.equal(code(await admin.post('/api/user/manage', { id: otherRoot, action: 'delete' })), 'USER_OUTRANKED');
  });
});
