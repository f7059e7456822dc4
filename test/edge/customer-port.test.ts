import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { CustomerRefusal, customerOwnerName, type CustomerPort, type TokenSettings } from '../../src/contract/customer.js';
import { EdgeAdminRefusal } from '../../src/contract/edge-admin.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';

const SETTINGS: TokenSettings = { name: 'laptop', expired_time: -1, remain_quota: 5000, unlimited_quota: false, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };

/** The refusal `p` ends with: its reason. */
async function refused(p: Promise<unknown>, reason: CustomerRefusal['reason']) {
  await assert.rejects(p, (e: unknown) => e instanceof CustomerRefusal && e.reason === reason && typeof e.detail === 'string');
}

eachDatabase('edge customer port: wallets and tokens of account users', (v) => {
  let s: EdgeServer;
  let port: CustomerPort;
  const ownerId = async (userId: number) => Number((await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', customerOwnerName(userId)).executeTakeFirstOrThrow()).id);
  const credits = async (userId: number) => s.ctx.db.selectFrom('edge_credits').selectAll().where('owner_id', '=', await ownerId(userId)).orderBy('created_at').execute();
  const tokenRow = (id: number) => s.ctx.db.selectFrom('edge_tokens').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    s = await startEdge(v);
    port = s.services.customers;
  });
  after(() => s.close());

  test('a user without an owner reads zeros and nothing is created; a grant creates the owner and its wallet, once per credit id', async () => {
    assert.deepEqual(await port.balance(101), { quota: 0, used_quota: 0, request_count: 0 });
    assert.equal(await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'account-101').executeTakeFirst(), undefined);
    assert.deepEqual(await port.grant(101, 700, 'signup:101', 'system:signup', 'starting balance'), { quota: 700, used_quota: 0, request_count: 0 });
    // A retry adds nothing, concurrent ones neither.
    const again = await Promise.all([1, 2, 3].map(() => port.grant(101, 700, 'signup:101', 'system:signup', 'starting balance')));
    assert.ok(again.every((b) => b.quota === 700));
    assert.deepEqual(await port.grant(101, 50, 'import:user:101', 'system:import', 'new-api quota'), { quota: 750, used_quota: 0, request_count: 0 });
    assert.deepEqual((await credits(101)).map((c) => [c.kind, Number(c.amount), c.reason]).sort(), [['import', 50, 'new-api quota'], ['signup', 700, 'starting balance']]);
    await refused(port.grant(102, 700, 'signup:101', 'system:signup', ''), 'invalid');
    assert.deepEqual(await port.balance(102), { quota: 0, used_quota: 0, request_count: 0 });
    for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER]) await refused(port.grant(101, bad, `x:${bad}`, 'system:t', ''), 'invalid');
    await refused(port.grant(0, 1, 'x:0', 'system:t', ''), 'invalid');
    const b = await port.balances([101, 102, 101]);
    assert.deepEqual([...b.entries()].sort(), [[101, { quota: 750, used_quota: 0, request_count: 0 }], [102, { quota: 0, used_quota: 0, request_count: 0 }]]);
  });

  test('setQuota sets the balance as one audited movement with its reason; below what running calls hold it is refused and nothing changes', async () => {
    await port.grant(103, 1000, 'signup:103', 'system:signup', '');
    assert.deepEqual(await port.setQuota(103, 400, 'account:1', 'refund dispute'), { quota: 400, used_quota: 0, request_count: 0 });
    const adjust = (await credits(103)).find((c) => c.kind === 'adjust')!;
    assert.deepEqual([Number(adjust.amount), adjust.reason], [-600, 'refund dispute']);
    const audit = await s.ctx.db.selectFrom('edge_audit').selectAll().where('operation', '=', 'wallet.adjust').orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(audit.actor, 'account:1');
    assert.deepEqual(JSON.parse(audit.detail), { owner: 'account-103', from: 1000, to: 400, amount: -600, reason: 'refund dispute' });
    // A running call holds 300.
    await s.ctx.db.updateTable('edge_wallets').set({ reserved: 300 }).where('owner_id', '=', await ownerId(103)).execute();
    await refused(port.setQuota(103, 299, 'account:1', 'too low'), 'insufficient');
    assert.equal((await credits(103)).filter((c) => c.kind === 'adjust').length, 1);
    assert.deepEqual(await port.setQuota(103, 300, 'account:1', 'exactly the hold'), { quota: 0, used_quota: 0, request_count: 0 });
    await s.ctx.db.updateTable('edge_wallets').set({ reserved: 0 }).where('owner_id', '=', await ownerId(103)).execute();
    // A user never seen: created at the set amount.
    assert.deepEqual(await port.setQuota(104, 25, 'account:1', 'goodwill'), { quota: 25, used_quota: 0, request_count: 0 });
    await refused(port.setQuota(104, -1, 'account:1', ''), 'invalid');
  });

  test('createToken: a svc_sk_ key shown in the answer and masked in every read; only its hash and the sealed pending key are stored', async () => {
    const { token, key } = await port.createToken(201, SETTINGS);
    const c = parseCredential(key)!;
    assert.ok(c, key);
    assert.equal(token.key, `${key.slice(0, 4)}**********${key.slice(-4)}`);
    assert.deepEqual({ ...token, id: 0, created_time: 0 }, { ...SETTINGS, id: 0, user_id: 201, key: token.key, status: 1, created_time: 0, accessed_time: 0, used_quota: 0 });
    assert.ok(Math.abs(token.created_time - Date.now() / 1000) < 10);
    const row = await tokenRow(token.id);
    assert.ok(row.pending_key && !row.pending_key.includes(c.secret));
    assert.ok(Math.abs(Number(row.pending_until) - (token.created_time + 900)) <= 1);
    const k = await s.ctx.db.selectFrom('edge_keys').selectAll().where('key_id', '=', c.keyId).executeTakeFirstOrThrow();
    assert.equal(k.secret_hash, crypto.createHash('sha256').update(c.secret).digest('hex'));
    assert.deepEqual(await port.token(201, token.id), token);
    const dump = JSON.stringify(await s.ctx.db.selectFrom('edge_tokens').selectAll().execute()) + JSON.stringify(await s.ctx.db.selectFrom('edge_audit').selectAll().execute());
    assert.ok(!dump.includes(c.secret), 'the secret is stored in the clear');
  });

  test('reveal: once after the create answer, within 15 minutes; then key_already_shown; a batch with one shown key reveals none', async () => {
    const a = await port.createToken(202, { ...SETTINGS, name: 'a' });
    const b = await port.createToken(202, { ...SETTINGS, name: 'b' });
    assert.deepEqual([...(await port.revealKeys(202, [a.token.id]))], [[a.token.id, a.key]]);
    await refused(port.revealKeys(202, [a.token.id]), 'key_already_shown');
    assert.equal((await tokenRow(a.token.id)).pending_key, null);
    await refused(port.revealKeys(202, [b.token.id, a.token.id]), 'key_already_shown');
    // b's showing was not spent by the refused batch; concurrent reveals show it once.
    const tries = await Promise.allSettled([1, 2, 3, 4].map(() => port.revealKeys(202, [b.token.id])));
    const shown = tries.filter((t) => t.status === 'fulfilled');
    assert.equal(shown.length, 1);
    assert.equal((shown[0] as PromiseFulfilledResult<Map<number, string>>).value.get(b.token.id), b.key);
    assert.ok(tries.every((t) => t.status === 'fulfilled' || (t.reason instanceof CustomerRefusal && t.reason.reason === 'key_already_shown')));
    // Past its showing time a key is refused, and its sealed copy dropped at the next change.
    const late = await port.createToken(202, { ...SETTINGS, name: 'late' });
    await s.ctx.db.updateTable('edge_tokens').set({ pending_until: Math.floor(Date.now() / 1000) - 1 }).where('id', '=', late.token.id).execute();
    await refused(port.revealKeys(202, [late.token.id]), 'key_already_shown');
    assert.equal((await tokenRow(late.token.id)).pending_key, null);
    await refused(port.revealKeys(202, [999_999]), 'not_found');
    await refused(port.revealKeys(202, []), 'invalid');
  });

  test("another user's token ids are not_found for every method and left untouched", async () => {
    const mine = await port.createToken(203, { ...SETTINGS, name: 'mine' });
    await port.createToken(204, { ...SETTINGS, name: 'theirs' });
    const before = await tokenRow(mine.token.id);
    await refused(port.token(204, mine.token.id), 'not_found');
    await refused(port.updateToken(204, mine.token.id, { ...SETTINGS, name: 'stolen' }), 'not_found');
    await refused(port.setTokenStatus(204, mine.token.id, 2), 'not_found');
    await refused(port.revealKeys(204, [mine.token.id]), 'not_found');
    await refused(port.token(205, mine.token.id), 'not_found');
    assert.equal(await port.deleteTokens(204, [mine.token.id]), 0);
    assert.deepEqual((await port.listTokens(204, { page: 1, size: 10 })).items.map((t) => t.name), ['theirs']);
    assert.deepEqual((await port.searchTokens(204, 'mine', '', { page: 1, size: 10 })).total, 0);
    assert.deepEqual((await port.searchTokens(204, '', mine.key, { page: 1, size: 10 })).total, 0);
    assert.deepEqual(await tokenRow(mine.token.id), before);
    assert.equal((await port.revealKeys(203, [mine.token.id])).get(mine.token.id), mine.key);
  });

  test('validation as new-api (name, expired_time, remain_quota) and stricter where the edge enforces (model ids, IPs, group)', async () => {
    const bad: Partial<TokenSettings>[] = [
      { name: '' }, { name: '   ' }, { name: 'x'.repeat(51) }, { name: 'a\nb' },
      { expired_time: 0 }, { expired_time: -2 }, { expired_time: 1.5 }, { expired_time: Math.floor(Date.now() / 1000) - 3600 },
      { remain_quota: -1 }, { remain_quota: 0.5 }, { remain_quota: 500_000_000_000_001 },
      { model_limits: 'gpt-4o, has space' }, { model_limits: 'x'.repeat(20_000) },
      { allow_ips: '10.0.0.1\nexample.com' }, { allow_ips: '10.0.0.0/33' }, { allow_ips: '::/129' },
      { group: 'bad group' }, { unlimited_quota: 'yes' as never }, { model_limits: null as never },
    ];
    for (const b of bad) await refused(port.createToken(206, { ...SETTINGS, ...b }), 'invalid');
    assert.equal((await port.listTokens(206, { page: 1, size: 10 })).total, 0);
    const ok = await port.createToken(206, { ...SETTINGS, name: 'x'.repeat(50), model_limits: 'gpt-4o, o3-mini,', allow_ips: '10.0.0.1, 192.168.0.0/16\n2001:db8::/32\n::1', group: 'vip' });
    assert.equal(ok.token.allow_ips, '10.0.0.1, 192.168.0.0/16\n2001:db8::/32\n::1');
    // An edit may keep a past expiry (the token then reads expired).
    const past = Math.floor(Date.now() / 1000) - 3600;
    assert.equal((await port.updateToken(206, ok.token.id, { ...SETTINGS, expired_time: past })).status, 3);
    await refused(port.updateToken(206, ok.token.id, { ...SETTINGS, remain_quota: -5 }), 'invalid');
    await refused(port.setTokenStatus(206, ok.token.id, 3), 'invalid');
  });

  test('statuses: 3 once expired, 4 once a limited token has nothing left; enabling either is invalid; disable and enable otherwise', async () => {
    const t = await port.createToken(207, SETTINGS);
    assert.equal((await port.setTokenStatus(207, t.token.id, 2)).status, 2);
    assert.equal((await port.setTokenStatus(207, t.token.id, 1)).status, 1);
    assert.equal((await port.updateToken(207, t.token.id, { ...SETTINGS, remain_quota: 0 })).status, 4);
    await refused(port.setTokenStatus(207, t.token.id, 1), 'invalid');
    assert.equal((await port.updateToken(207, t.token.id, { ...SETTINGS, remain_quota: 0, unlimited_quota: true })).status, 1);
    await s.ctx.db.updateTable('edge_tokens').set({ expired_time: Math.floor(Date.now() / 1000) - 1 }).where('id', '=', t.token.id).execute();
    assert.equal((await port.token(207, t.token.id)).status, 3);
    await refused(port.setTokenStatus(207, t.token.id, 1), 'invalid');
    assert.equal((await port.setTokenStatus(207, t.token.id, 2)).status, 2);
  });

  test('list newest first, paged; search by name part (LIKE characters literal), by full key, by masked key', async () => {
    const made = [];
    for (const name of ['alpha', 'beta_1', 'beta%2', 'gamma']) made.push(await port.createToken(208, { ...SETTINGS, name }));
    const page1 = await port.listTokens(208, { page: 1, size: 3 });
    assert.deepEqual([page1.total, page1.items.map((t) => t.name)], [4, ['gamma', 'beta%2', 'beta_1']]);
    assert.deepEqual((await port.listTokens(208, { page: 2, size: 3 })).items.map((t) => t.name), ['alpha']);
    const names = async (keyword: string, key = '') => (await port.searchTokens(208, keyword, key, { page: 1, size: 10 })).items.map((t) => t.name);
    assert.deepEqual(await names('beta'), ['beta%2', 'beta_1']);
    assert.deepEqual(await names('a%'), ['beta%2']);
    assert.deepEqual(await names('a_'), ['beta_1']);
    assert.deepEqual(await names('', made[0]!.key), ['alpha']);
    assert.deepEqual(await names('', made[0]!.token.key), ['alpha']);
    assert.deepEqual(await names('gamma', made[0]!.key), []);
    const c = parseCredential(made[3]!.key)!;
    assert.deepEqual(await names('', `svc_sk_${c.keyId}.${'A'.repeat(43)}`), []);
  });

  test('delete: revokes the key, hides the token, counts only the own live ones; the key then fails at the edge', async () => {
    const a = await port.createToken(209, { ...SETTINGS, name: 'a' });
    const b = await port.createToken(209, { ...SETTINGS, name: 'b' });
    const other = await port.createToken(210, { ...SETTINGS, name: 'other' });
    assert.equal(await port.deleteTokens(209, [a.token.id, b.token.id, other.token.id, a.token.id]), 2);
    assert.equal(await port.deleteTokens(209, [a.token.id]), 0);
    assert.equal((await port.listTokens(209, { page: 1, size: 10 })).total, 0);
    await refused(port.token(209, a.token.id), 'not_found');
    await refused(port.revealKeys(209, [b.token.id]), 'not_found');
    const key = await s.ctx.db.selectFrom('edge_keys').select('revoked_at').where('key_id', '=', parseCredential(a.key)!.keyId).executeTakeFirstOrThrow();
    assert.notEqual(key.revoked_at, null);
    assert.equal((await s.request('GET', '/v1/models', { token: a.key })).json.error.code, 'invalid_api_key');
    assert.equal((await port.token(210, other.token.id)).name, 'other');
    await refused(port.deleteTokens(209, []), 'invalid');
  });

  test('the CLI and the console never create an account-… owner; they may credit one that exists', async () => {
    const issued = await s.cli('edge', 'key', 'issue', '--owner', 'account-301');
    assert.match(String(issued.error), /account-301 does not exist/);
    assert.match(String((await s.cli('edge', 'wallet', 'credit', '--owner', 'account-301', '--amount', '5')).error), /account users/);
    await assert.rejects(s.services.admin.addWebhook('account-301', 'http://127.0.0.1:9/hook', 'staff:root'), EdgeAdminRefusal);
    await assert.rejects(s.services.admin.credit('account-301', 5, 'staff:root'), EdgeAdminRefusal);
    assert.equal(await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'account-301').executeTakeFirst(), undefined);
    await port.grant(301, 10, 'signup:301', 'system:signup', '');
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'account-301', '--amount', '5')).error, null);
    assert.equal((await port.balance(301)).quota, 15);
    assert.equal((await s.cli('edge', 'key', 'issue', '--owner', 'machine-1')).error, null);
  });
});
