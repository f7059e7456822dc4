import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { eachDatabase, tempDir } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { authorize, startFakeOAuth2 } from '../helpers/oidc.js';
import type { Browser } from '../helpers/http.js';
import { ROLE } from '../../src/account/db.js';

async function proof(b: Browser, password: string, scope: string, context: unknown) {
  const r = await b.post('/api/verify', { method: 'password', scope, password, context });
  assert.equal(r.json.success, true, r.text);
  return r.json.data.proof_token as string;
}

eachDatabase('A31 / A32 / A20 / A21 / A19 bindings', (v) => {
  let s: AccountServer;
  let acme: Awaited<ReturnType<typeof startFakeOAuth2>>;
  let carolId: number;
  const dir = tempDir();

  async function bindAcme(b: Browser, password: string, acmeUserId: number) {
    acme.state.user = { id: acmeUserId, username: `acme${acmeUserId}` };
    const p = await proof(b, password, 'account.binding.bind', { provider: 'acme' });
    const st = (await b.post('/api/oauth/state', { provider: 'acme', intent: 'bind' }, { 'x-security-proof': p })).json.data;
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/acme?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text);
  }

  before(async () => {
    acme = await startFakeOAuth2({ clientId: 'acme-id', clientSecret: 'acme-secret' });
    const file = path.join(dir, 'providers.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          slug: 'acme',
          name: 'Acme SSO',
          icon: 'https://acme.example/icon.png',
          client_id: 'acme-id',
          client_secret: 'acme-secret',
          authorization_endpoint: `${acme.base}/login/oauth/authorize`,
          token_endpoint: `${acme.base}/login/oauth/access_token`,
          userinfo_endpoint: `${acme.base}/api/user`,
          user_id_field: 'id',
          username_field: 'username',
        },
      ]),
    );
    s = await startAccount(v, { env: { OAUTH_ALLOW_INSECURE_HTTP: 'true', OAUTH_CUSTOM_PROVIDERS_FILE: file } });
    carolId = await s.createUser('carol', 'carol password 1', { email: 'carol@example.com' });
    await s.createUser('admin', 'admin password 1', { role: ROLE.admin });
    await s.createUser('admin2', 'admin2 password 1', { role: ROLE.admin });
    await s.createUser('root', 'root password 12', { role: ROLE.root });
  });
  after(async () => {
    await s.close();
    await acme.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a custom provider logs a new user in; A31 lists own bindings with the provider metadata', async () => {
    acme.state.user = { id: 5150, username: 'acmeperson' };
    const b = s.browser();
    const st = (await b.post('/api/oauth/state', { provider: 'acme', intent: 'login' })).json.data;
    const back = await authorize(st.authorization_url);
    const r = await b.get(`/api/oauth/acme?code=${back.get('code')}&state=${back.get('state')}`);
    assert.equal(r.json.success, true, r.text);
    assert.equal(r.json.data.user.username, 'acmeperson');
    b.accessToken = r.json.data.access_token;
    const list = await b.get('/api/user/oauth/bindings');
    assert.deepEqual(list.json.data, [
      { provider_id: 'acme', provider_name: 'Acme SSO', provider_slug: 'acme', provider_icon: 'https://acme.example/icon.png', provider_user_id: '5150' },
    ]);
  });

  test('A31 needs a login; A32 needs an AccountUnbind proof for that provider and removes only that binding', async () => {
    assert.equal((await s.browser().get('/api/user/oauth/bindings')).status, 401);
    const b = s.browser();
    await b.login('carol', 'carol password 1');
    await bindAcme(b, 'carol password 1', 6001);
    await s.services.bindings.bind(carolId, s.services.bindings.kindOf('github')!, '99');
    const list = (await b.get('/api/user/oauth/bindings')).json.data.map((x: { provider_id: string }) => x.provider_id);
    assert.deepEqual(list, ['github', 'acme']);

    const noProof = await b.delete('/api/user/oauth/bindings/github');
    assert.equal(noProof.status, 403);
    const wrongContext = await proof(b, 'carol password 1', 'account.binding.unbind', { provider_id: 'acme' });
    const mismatch = await b.delete('/api/user/oauth/bindings/github', { 'x-security-proof': wrongContext });
    assert.equal(mismatch.status, 403);
    assert.match(mismatch.json.code, /^SECURITY_PROOF_/);

    const p = await proof(b, 'carol password 1', 'account.binding.unbind', { provider_id: 'github' });
    const r = await b.delete('/api/user/oauth/bindings/github', { 'x-security-proof': p });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual(r.json.data, { provider_id: 'github', notification_warning: false });
    const after = (await b.get('/api/user/oauth/bindings')).json.data.map((x: { provider_id: string }) => x.provider_id);
    assert.deepEqual(after, ['acme']);

    const p2 = await proof(b, 'carol password 1', 'account.binding.unbind', { provider_id: 'discord' });
    const missing = await b.delete('/api/user/oauth/bindings/discord', { 'x-security-proof': p2 });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'OAUTH_BINDING_NOT_FOUND');
  });

  test('A32 refuses to remove the last way to sign in', async () => {
    const id = await s.createUser('dave', 'dave password 1');
    const b = s.browser();
    await b.login('dave', 'dave password 1');
    await bindAcme(b, 'dave password 1', 7001);
    const p = await proof(b, 'dave password 1', 'account.binding.unbind', { provider_id: 'acme' });
    // Arrange an OAuth-only account: the password goes away after the proof was issued.
    await s.ctx.database.db.updateTable('users').set({ password_hash: null }).where('id', '=', id).execute();
    const r = await b.delete('/api/user/oauth/bindings/acme', { 'x-security-proof': p });
    assert.equal(r.status, 409);
    assert.equal(r.json.code, 'LAST_LOGIN_METHOD');
    assert.equal((await b.get('/api/user/oauth/bindings')).json.data.length, 1);
  });

  test('A20 / A21: staff view and remove bindings of users they outrank', async () => {
    const admin = s.browser();
    await admin.login('admin', 'admin password 1');
    const user = s.browser();
    await user.login('carol', 'carol password 1');
    assert.equal((await user.get(`/api/user/${carolId}/oauth/bindings`)).status, 403);

    const view = await admin.get(`/api/user/${carolId}/oauth/bindings`);
    assert.equal(view.json.success, true);
    assert.equal(view.json.data[0].provider_slug, 'acme');
    const admin2Id = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'admin2').executeTakeFirstOrThrow()).id);
    const peer = await admin.get(`/api/user/${admin2Id}/oauth/bindings`);
    assert.equal(peer.status, 403);
    assert.equal(peer.json.code, 'USER_OUTRANKED');
    const root = s.browser();
    await root.login('root', 'root password 12');
    assert.equal((await root.get(`/api/user/${admin2Id}/oauth/bindings`)).json.success, true);
    assert.equal((await admin.get('/api/user/999999/oauth/bindings')).status, 404);

    const removed = await admin.delete(`/api/user/${carolId}/oauth/bindings/acme`);
    assert.deepEqual(removed.json, { success: true, message: '' });
    assert.equal((await admin.get(`/api/user/${carolId}/oauth/bindings`)).json.data.length, 0);
    const again = await admin.delete(`/api/user/${carolId}/oauth/bindings/acme`);
    assert.equal(again.json.code, 'OAUTH_BINDING_NOT_FOUND');
  });

  test('A19 clears a built-in binding type; unknown types are refused', async () => {
    const admin = s.browser();
    await admin.login('admin', 'admin password 1');
    await s.services.bindings.bind(carolId, s.services.bindings.kindOf('telegram')!, '555');
    const r = await admin.delete(`/api/user/${carolId}/bindings/telegram`);
    assert.deepEqual(r.json, { success: true, message: 'success', data: { bindingType: 'telegram', username: 'carol' } });
    const row = await s.ctx.database.db.selectFrom('users').selectAll().where('id', '=', carolId).executeTakeFirstOrThrow();
    assert.equal((row as Record<string, unknown>).telegram_id, null);
    const email = await admin.delete(`/api/user/${carolId}/bindings/email`);
    assert.equal(email.json.success, true);
    const after = await s.ctx.database.db.selectFrom('users').select('email').where('id', '=', carolId).executeTakeFirstOrThrow();
    assert.equal(after.email, null);
    const bad = await admin.delete(`/api/user/${carolId}/bindings/myspace`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'BINDING_TYPE_INVALID');
    // Names of Object.prototype's members are no binding types either (one was a 500 from the database).
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const odd = await admin.delete(`/api/user/${carolId}/bindings/${name}`);
      assert.equal(odd.status, 400, `${name}: ${odd.text}`);
      assert.equal(odd.json.code, 'BINDING_TYPE_INVALID');
    }
    assert.equal(s.services.bindings.kindOf('__proto__'), null);
    const user = s.browser();
    await user.login('carol', 'carol password 1');
    assert.equal((await user.delete(`/api/user/${carolId}/bindings/github`)).status, 403);
  });
});
