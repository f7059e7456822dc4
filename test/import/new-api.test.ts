import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { totpCode } from '../../src/account/two-factor/totp.js';
import { ALICE_PASSWORD, BACKUP, BOB_PASSWORD, BOB_TOTP, CLIENT_SECRET, fill, KEYS, T0, type Filled } from './new-api-data.js';
import { databases, importCli, line, openGateway, PASSKEY_ENV } from './harness.js';

const ACCOUNT_TABLES = ['users', 'user_oauth_bindings', 'two_factor', 'two_factor_backup_codes', 'passkey_credentials', 'import_map'];
const GATEWAY_TABLES = ['channels', 'abilities', 'import_map', 'gateway_audit'];

async function snapshot(db: any, tables: string[]) {
  const out: Record<string, unknown[]> = {};
  for (const t of tables) out[t] = (await db.selectFrom(t).selectAll().execute()).map((r: object) => JSON.stringify(r)).sort();
  return out;
}

eachDatabase('import new-api', (v) => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  let data: Filled;
  let localDave: number;
  const ids: Record<string, number> = {};
  const run = (...args: string[]) => importCli(s, d, '--from', d.from, ...args);
  const userByName = (name: string) => s.ctx.database.db.selectFrom('users').selectAll().where('username', '=', name).executeTakeFirst() as Promise<any>;

  before(async () => {
    s = await startAccount(v, { env: PASSKEY_ENV });
    d = await databases(v, s);
    data = await fill(d.source);
    localDave = await s.createUser('dave', 'local dave password');
    await s.createUser('frank.local', 'local frank password', { email: 'frank@example.com' });
  });
  after(async () => {
    await d?.close();
    await s?.close();
  });

  test('--dry-run prints what would happen and writes nothing', async () => {
    const r = await run('--dry-run');
    assert.equal(r.error, null, r.text);
    assert.match(r.text, /^dry run: nothing was written/);
    assert.equal(line(r.text, 'users'), 'users: read 8, imported 5, updated 0, unchanged 0, skipped 3');
    assert.equal(line(r.text, 'channels'), 'channels: read 5, imported 2, updated 0, unchanged 0, skipped 3');
    assert.match(r.text, /\n {2}gina \(new-api id 7\): undecodable 2FA secret in new-api(\n|$)/);
    const users = await s.ctx.database.db.selectFrom('users').select('username').execute();
    assert.deepEqual(users.map((u) => u.username).sort(), ['dave', 'frank.local']);
    assert.equal((await s.ctx.database.db.selectFrom('import_map' as any).selectAll().execute()).length, 0);
    const g = await openGateway(s, d.gatewayUrl);
    try {
      assert.equal((await g.ctx.db.selectFrom('channels').selectAll().execute()).length, 0);
      assert.equal((await g.ctx.db.selectFrom('import_map' as any).selectAll().execute()).length, 0);
    } finally {
      await g.close();
    }
  });

  test('imports users, identities, 2FA, backup codes, passkeys and channels, field by field', async () => {
    const r = await run();
    assert.equal(r.error, null, r.text);
    const expect = {
      users: 'users: read 8, imported 5, updated 0, unchanged 0, skipped 3',
      bindings: 'bindings: read 8, imported 7, updated 0, unchanged 0, skipped 1',
      two_fas: 'two_fas: read 3, imported 1, updated 0, unchanged 0, skipped 2',
      two_fa_backup_codes: 'two_fa_backup_codes: read 3, imported 2, updated 0, unchanged 0, skipped 1',
      passkey_credentials: 'passkey_credentials: read 2, imported 1, updated 0, unchanged 0, skipped 1',
      channels: 'channels: read 5, imported 2, updated 0, unchanged 0, skipped 3',
      abilities: 'abilities: read 7, imported 0, updated 0, unchanged 5, skipped 2',
    };
    for (const [t, l] of Object.entries(expect)) assert.equal(line(r.text, t), l, r.text);
    for (const reason of [
      '4: username taken by a local user',
      '5: deleted in the source',
      '6: email taken by a local user',
      '2: undecodable 2FA secret',
      '3: setup not finished in the source',
      '3: used in the source',
      '1: one passkey per user here: a more recently used one of this user was kept',
      '3: unsupported channel type 99',
      '4: refused as G02 would: VertexAI needs other = JSON with a "default" region',
      '5: channel_info must be a JSON object as new-api writes it',
      'oauth:2: its user was not imported',
      "1/default/ghost-model: not implied by the channel's models and groups",
      '3/default/gpt-4o: its channel was not imported',
    ]) assert.ok(r.text.includes(reason), `report lacks "${reason}":\n${r.text}`);
    // Never a key, hash or secret in the report.
    for (const secret of [KEYS.single, ...KEYS.multi, BOB_TOTP, CLIENT_SECRET, ...Object.values(data.hashes), ...data.backupHashes]) assert.ok(!r.text.includes(secret));

    const alice = await userByName('alice');
    ids.alice = Number(alice.id);
    assert.equal(alice.display_name, 'Alice A');
    assert.equal(alice.email, 'alice@example.com');
    assert.equal(alice.password_hash, data.hashes.alice);
    assert.deepEqual([alice.role, alice.status, alice.group, alice.aff_code, Number(alice.created_at), alice.github_id, alice.inviter_id], [100, 1, 'vip', 'AFFALICE', T0 + 1, 'gh-1', null]);
    const bob = await userByName('bob');
    ids.bob = Number(bob.id);
    assert.deepEqual([bob.status, bob.role, Number(bob.inviter_id), bob.telegram_id, bob.wechat_id, bob.linux_do_id, bob.email], [2, 1, ids.alice, 'tg-2', 'wx-2', 'ld-2', null]);
    const carol = await userByName('carol');
    ids.carol = Number(carol.id);
    assert.deepEqual([carol.role, carol.discord_id, carol.oidc_id, carol.display_name, carol.email], [10, 'dc-3', 'oidc-3', 'CAROL', 'carol@example.com']);
    const custom = await s.ctx.database.db.selectFrom('user_oauth_bindings' as any).selectAll().execute();
    assert.deepEqual(custom.map((c: any) => [Number(c.user_id), c.provider_slug, c.provider_user_id]), [[ids.carol, 'corp-sso', 'corp-3']]);
    // gina's 2FA secret does not decode: she is held (disabled) and named with what the admin does.
    assert.equal((await userByName('gina')).status, 2);
    assert.match(r.text, /\nusers held, disabled until an admin acts \(their second factor was not imported\): 1\n {2}what to do: `npm run cli -- user enable --username NAME` .*\n {2}gina \(new-api id 7\): undecodable 2FA secret in new-api$/);
    assert.ok(!r.text.includes('users without a usable password'), r.text);
    assert.equal((await userByName('dave')).id, localDave);

    const tf = await s.ctx.database.db.selectFrom('two_factor' as any).selectAll().execute();
    assert.deepEqual(tf.map((t: any) => Number(t.user_id)), [ids.bob]);
    assert.ok(!String(tf[0].secret_sealed).includes(BOB_TOTP));
    const codes = await s.ctx.database.db.selectFrom('two_factor_backup_codes' as any).selectAll().orderBy('code_hash').execute();
    assert.deepEqual(codes.map((c: any) => [c.code_hash, Number(c.user_id), c.used_at]), data.backupHashes.slice(0, 2).sort().map((h) => [h, ids.bob, null]));
    const pk = (await s.ctx.database.db.selectFrom('passkey_credentials' as any).selectAll().execute()) as any[];
    assert.equal(pk.length, 1);
    assert.deepEqual(
      [Number(pk[0].user_id), pk[0].credential_id, pk[0].public_key, Number(pk[0].counter), pk[0].rp_id, pk[0].transports, Number(pk[0].last_used_at), pk[0].user_handle],
      [ids.carol, data.passkey.id.toString('base64url'), data.passkey.cose.toString('base64url'), 0, 'localhost', 'internal,hybrid', T0 + 20, Buffer.from('3').toString('base64url')],
    );

    const g = await openGateway(s, d.gatewayUrl);
    try {
      const rows = await g.ctx.db.selectFrom('channels').selectAll().orderBy('id').execute();
      assert.equal(rows.length, 2);
      const [one, multi] = rows as any[];
      assert.notEqual(one.key, KEYS.single);
      assert.equal(g.services.channels.openKey(one.key), KEYS.single);
      const { id: _i, key: _k, ...fields } = one;
      assert.deepEqual(
        { ...fields, balance: Number(fields.balance), channel_info: JSON.parse(fields.channel_info).is_multi_key },
        {
          type: 1, openai_organization: 'org-1', test_model: 'gpt-4o-mini', status: 1, name: 'primary', weight: 3, created_time: T0 + 1, test_time: T0 + 2,
          response_time: 321, base_url: 'https://api.example.com', other: 'o', balance: 12.5, balance_updated_time: T0 + 3, models: 'gpt-4o,gpt-4o-mini',
          group: 'default,vip', used_quota: 777, model_mapping: '{"gpt-4o":"gpt-4o-2024"}', status_code_mapping: null, priority: 5, auto_ban: 0,
          other_info: '{"source":"x"}', tag: 'tagA', setting: '{"proxy":""}', param_override: '{"temperature":0}', header_override: null, remark: 'note',
          channel_info: false, settings: '{"azure_responses_version":""}',
        },
      );
      assert.equal(g.services.channels.openKey(multi.key), KEYS.multi.join('\n'));
      const info = JSON.parse(multi.channel_info);
      assert.deepEqual(
        [multi.type, multi.status, info.is_multi_key, info.multi_key_size, info.multi_key_status_list, info.multi_key_disabled_reason, info.multi_key_mode, info.multi_key_polling_index],
        [14, 3, true, 3, { 1: 3 }, { 1: 'quota' }, 'polling', 2],
      );
      const abilities = await g.ctx.db.selectFrom('abilities').selectAll().orderBy('channel_id').orderBy('group').orderBy('model').execute();
      assert.deepEqual(
        abilities.map((a) => [Number(a.channel_id), a.group, a.model, a.enabled, Number(a.priority), Number(a.weight), a.tag]),
        [
          [one.id, 'default', 'gpt-4o', 1, 5, 3, 'tagA'],
          [one.id, 'default', 'gpt-4o-mini', 1, 5, 3, 'tagA'],
          [one.id, 'vip', 'gpt-4o', 1, 5, 3, 'tagA'],
          [one.id, 'vip', 'gpt-4o-mini', 1, 5, 3, 'tagA'],
          [multi.id, 'default', 'claude-3', 0, 1, 7, null],
        ].map((a) => [Number(a[0]), ...a.slice(1)]),
      );
      const audit = await g.ctx.db.selectFrom('gateway_audit').selectAll().execute();
      assert.deepEqual(audit.map((a) => [a.operation, JSON.parse(a.detail)]), [['cli:import', { source: 'new-api', imported: 2, updated: 0 }]]);
    } finally {
      await g.close();
    }
  });

  test('a second run changes nothing', async () => {
    const g = await openGateway(s, d.gatewayUrl);
    try {
      const before = [await snapshot(s.ctx.database.db, ACCOUNT_TABLES), await snapshot(g.ctx.db, GATEWAY_TABLES)];
      const r = await run();
      assert.equal(r.error, null, r.text);
      assert.equal(line(r.text, 'users'), 'users: read 8, imported 0, updated 0, unchanged 5, skipped 3');
      assert.equal(line(r.text, 'channels'), 'channels: read 5, imported 0, updated 0, unchanged 2, skipped 3');
      for (const l of r.text.split('\n').filter((x) => /^\w+: read/.test(x))) assert.match(l, /imported 0, updated 0,/);
      assert.deepEqual([await snapshot(s.ctx.database.db, ACCOUNT_TABLES), await snapshot(g.ctx.db, GATEWAY_TABLES)], before);
    } finally {
      await g.close();
    }
  });

  test('the imported bcrypt password logs in through A25 and is rehashed to argon2id; a later run keeps it', async () => {
    const b = s.browser();
    const wrong = await b.login('alice', 'not her password');
    assert.equal(wrong.json.code, 'LOGIN_FAILED');
    assert.equal((await userByName('alice')).password_hash, data.hashes.alice);
    const ok = await b.login('alice', ALICE_PASSWORD);
    assert.equal(ok.json.success, true, ok.text);
    assert.match(ok.json.data.access_token, /^ey/);
    const after = (await userByName('alice')).password_hash;
    assert.match(after, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // The email works as the login name too, with the new hash.
    assert.equal((await s.browser().login('alice@example.com', ALICE_PASSWORD)).json.success, true);
    const r = await run();
    assert.match(line(r.text, 'users'), /imported 0, updated 0, unchanged 5/);
    assert.equal((await userByName('alice')).password_hash, after);
    assert.ok(!s.log.text().includes(ALICE_PASSWORD) && !s.log.text().includes(data.hashes.alice));
  });

  test('the imported TOTP secret and backup codes complete a login; a used backup code is refused', async () => {
    await s.ctx.database.db.updateTable('users').set({ status: 1 }).where('id', '=', ids.bob).execute();
    const challenge = async () => {
      const b = s.browser();
      const r = await b.login('bob', BOB_PASSWORD);
      assert.equal(r.json.data?.require_verification, true, r.text);
      return { b, flow: r.json.data.flow_token as string };
    };
    let c = await challenge();
    const viaBackup = await c.b.post('/api/user/login/verify', { flow_token: c.flow, code: BACKUP[1]!.toLowerCase() });
    assert.equal(viaBackup.json.success, true, viaBackup.text);
    c = await challenge();
    assert.equal((await c.b.post('/api/user/login/verify', { flow_token: c.flow, code: BACKUP[1] })).json.code, 'SECURITY_VERIFICATION_FAILED');
    c = await challenge();
    assert.equal((await c.b.post('/api/user/login/verify', { flow_token: c.flow, code: BACKUP[2] })).json.code, 'SECURITY_VERIFICATION_FAILED');
    c = await challenge();
    const viaTotp = await c.b.post('/api/user/login/verify', { flow_token: c.flow, code: totpCode(BOB_TOTP, Date.now()) });
    assert.equal(viaTotp.json.success, true, viaTotp.text);
  });

  test('the imported passkey signs carol in without a password', async () => {
    const begin = await s.browser().post('/api/user/passkey/login/begin', {});
    assert.equal(begin.json.success, true, begin.text);
    const cred = data.auth.get(begin.json.data.options);
    const r = await s.browser().post('/api/user/passkey/login/finish', { flow_token: begin.json.data.flow_token, credential: cred });
    assert.equal(r.json.success, true, r.text);
    assert.deepEqual([r.json.data.user.username, r.json.data.session.login_method], ['carol', 'passkey']);
    // carol's id here differs from hers in new-api: the handle her authenticator holds was imported with the credential.
    assert.notEqual(ids.carol, 3);
  });

  test('a change in the source is applied on the next run, and only that change', async () => {
    await d.source.db.updateTable('channels').set({ priority: 9, key: 'sk-rotated-secret-9' }).where('id', '=', 1).execute();
    await d.source.db.updateTable('users').set({ role: 10 }).where('id', '=', 1).execute();
    const before = await userByName('alice');
    const r = await run();
    assert.equal(r.error, null, r.text);
    assert.equal(line(r.text, 'users'), 'users: read 8, imported 0, updated 1, unchanged 4, skipped 3');
    assert.equal(line(r.text, 'channels'), 'channels: read 5, imported 0, updated 1, unchanged 1, skipped 3');
    assert.ok(!r.text.includes('sk-rotated-secret-9'));
    const alice = await userByName('alice');
    assert.deepEqual([alice.role, alice.auth_version, alice.password_hash], [10, before.auth_version + 1, before.password_hash]);
    const g = await openGateway(s, d.gatewayUrl);
    try {
      const one = (await g.ctx.db.selectFrom('channels').selectAll().orderBy('id').executeTakeFirstOrThrow()) as any;
      assert.equal(g.services.channels.openKey(one.key), 'sk-rotated-secret-9');
      assert.equal(one.priority, 9);
      const prios = await g.ctx.db.selectFrom('abilities').select('priority').where('channel_id', '=', one.id).execute();
      assert.deepEqual([...new Set(prios.map((p) => Number(p.priority)))], [9]);
    } finally {
      await g.close();
    }
  });
});
