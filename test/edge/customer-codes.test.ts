import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { CODE_STATUS, CustomerRefusal, customerOwnerName } from '../../src/contract/customer.js';
import { ledgerPart } from '../../src/edge/customers/ledger/index.js';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { walletOf } from '../helpers/runs.js';

const ADMIN = 'account:1';
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const nowSeconds = () => Math.floor(Date.now() / 1000);

async function refusal(p: Promise<unknown>, reason: CustomerRefusal['reason']) {
  let caught: unknown;
  await assert.rejects(p, (e: unknown) => ((caught = e), e instanceof CustomerRefusal && e.reason === reason));
  return caught as CustomerRefusal;
}

eachDatabase('customer top-up codes: hashed, shown once, audited, redeemed exactly once', (v) => {
  let s: EdgeServer;
  let ledger: ReturnType<typeof ledgerPart>;
  before(async () => {
    s = await startEdge(v);
    ledger = ledgerPart(s.ctx, s.services.relay);
  });
  after(() => s.close());

  const audit = (operation: string) => s.ctx.db.selectFrom('edge_audit').select(['actor', 'detail']).where('operation', '=', operation).orderBy('id').execute();
  const codeRow = (key: string) => s.ctx.db.selectFrom('edge_redemptions').selectAll().where('key_hash', '=', sha256(key)).executeTakeFirstOrThrow();

  test('create answers the keys once; only their SHA-256 and a mask are kept; lists, search, update, status, delete are audited', async () => {
    const keys = await ledger.createCodes({ name: 'spring', quota: 500_000, count: 3, expired_time: 0 }, ADMIN);
    assert.equal(keys.length, 3);
    for (const k of keys) assert.match(k, /^[0-9a-f]{32}$/);
    assert.equal(new Set(keys).size, 3);
    const stored = JSON.stringify(await s.ctx.db.selectFrom('edge_redemptions').selectAll().execute()) + JSON.stringify(await s.ctx.db.selectFrom('edge_audit').selectAll().execute());
    for (const k of keys) assert.ok(!stored.includes(k) && !stored.includes(k.slice(4, 28)), 'a code is stored or audited in clear');
    const row = await codeRow(keys[0]!);
    assert.equal(row.key_hint, `${keys[0]!.slice(0, 4)}**********${keys[0]!.slice(-4)}`);

    const list = await ledger.listCodes('', { page: 1, size: 10 });
    assert.equal(list.total, 3);
    const first = list.items.find((c) => c.id === Number(row.id))!;
    assert.deepEqual(first, { id: Number(row.id), name: 'spring', key: row.key_hint, status: 1, quota: 500_000, created_time: Number(row.created_time), redeemed_time: 0, used_user_id: 0, expired_time: 0 });
    assert.deepEqual(list.items.map((c) => c.id), [...list.items.map((c) => c.id)].sort((a, b) => b - a), 'newest first');
    assert.ok(!JSON.stringify(list).includes(keys[0]!));

    await ledger.createCodes({ name: 'sum_mer', quota: 10, count: 1, expired_time: nowSeconds() + 3600 }, ADMIN);
    assert.deepEqual((await ledger.listCodes('spr', { page: 1, size: 10 })).items.map((c) => c.name), ['spring', 'spring', 'spring']);
    assert.deepEqual((await ledger.listCodes('sum_', { page: 1, size: 10 })).items.map((c) => c.name), ['sum_mer']);
    assert.equal((await ledger.listCodes('s_m', { page: 1, size: 10 })).total, 0, "LIKE's own characters are literal");
    assert.deepEqual((await ledger.listCodes(String(row.id), { page: 1, size: 10 })).items.map((c) => c.id), [Number(row.id)]);
    assert.deepEqual((await ledger.listCodes('', { page: 2, size: 3 })).items.length, 1);

    const id = Number(row.id);
    const updated = await ledger.updateCode(id, { name: 'spring-2', quota: 750_000, expired_time: 0 }, ADMIN);
    assert.deepEqual([updated.name, updated.quota], ['spring-2', 750_000]);
    assert.equal((await ledger.setCodeStatus(id, CODE_STATUS.disabled, ADMIN)).status, 2);
    assert.equal((await ledger.setCodeStatus(id, CODE_STATUS.enabled, ADMIN)).status, 1);
    assert.equal((await ledger.setCodeStatus(id, CODE_STATUS.enabled, ADMIN)).status, 1, 'enabling an enabled code changes nothing and is no error');
    assert.equal((await ledger.updateCode(id, { name: 'spring-2', quota: 750_000, expired_time: 0 }, ADMIN)).name, 'spring-2', 'the same values again');
    await refusal(ledger.setCodeStatus(id, CODE_STATUS.used, ADMIN), 'invalid');
    await ledger.deleteCode(id, ADMIN);
    assert.ok((await s.ctx.db.selectFrom('edge_redemptions').select('deleted_at').where('id', '=', id).executeTakeFirstOrThrow()).deleted_at !== null, 'soft deleted');
    await refusal(ledger.deleteCode(id, ADMIN), 'not_found');
    await refusal(ledger.updateCode(id, { name: 'x', quota: 1, expired_time: 0 }, ADMIN), 'not_found');
    await refusal(ledger.setCodeStatus(id, 2, ADMIN), 'not_found');
    await refusal(ledger.updateCode(999_999, { name: 'x', quota: 1, expired_time: 0 }, ADMIN), 'not_found');
    assert.equal((await ledger.listCodes('', { page: 1, size: 10 })).total, 3, 'a deleted code is not listed');

    const created = await audit('code.create');
    assert.equal(created.length, 2);
    assert.deepEqual(JSON.parse(created[0]!.detail), { name: 'spring', quota: 500_000, count: 3, expired_time: 0, ids: JSON.parse(created[0]!.detail).ids });
    assert.equal(created[0]!.actor, ADMIN);
    assert.deepEqual(JSON.parse((await audit('code.update'))[0]!.detail), { id, name: 'spring-2', quota: 750_000, expired_time: 0 });
    assert.deepEqual((await audit('code.status')).map((r) => JSON.parse(r.detail)), [{ id, status: 2 }, { id, status: 1 }, { id, status: 1 }]);
    assert.deepEqual((await audit('code.delete')).map((r) => JSON.parse(r.detail)), [{ id }]);
  });

  test("bad input is refused with the field's rule, and nothing is made", async () => {
    const before = (await ledger.listCodes('', { page: 1, size: 100 })).total;
    const bad = [
      { name: '', quota: 1, count: 1, expired_time: 0 },
      { name: 'x'.repeat(21), quota: 1, count: 1, expired_time: 0 },
      { name: 'ok', quota: 0, count: 1, expired_time: 0 },
      { name: 'ok', quota: 1.5, count: 1, expired_time: 0 },
      { name: 'ok', quota: 1, count: 0, expired_time: 0 },
      { name: 'ok', quota: 1, count: 101, expired_time: 0 },
      { name: 'ok', quota: 1, count: 1, expired_time: nowSeconds() - 10 },
    ];
    for (const c of bad) await refusal(ledger.createCodes(c, ADMIN), 'invalid');
    assert.equal((await ledger.listCodes('', { page: 1, size: 100 })).total, before);
    assert.equal((await ledger.createCodes({ name: '满百', quota: 1, count: 100, expired_time: 0 }, ADMIN)).length, 100);
  });

  test('20 concurrent redemptions of one code: exactly one credit, the wallet exact', async () => {
    const [key] = await ledger.createCodes({ name: 'race', quota: 123_456, count: 1, expired_time: 0 }, ADMIN);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => ledger.redeem(21, key!)));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1, JSON.stringify(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))));
    assert.equal((won[0] as PromiseFulfilledResult<number>).value, 123_456);
    for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof CustomerRefusal && r.reason.reason === 'code_invalid', String(r.reason));
    const w = await walletOf(s, customerOwnerName(21));
    assert.deepEqual([w.balance, w.reserved], [123_456, 0]);
    const row = await codeRow(key!);
    const credits = await s.ctx.db.selectFrom('edge_credits').selectAll().where('credit_id', '=', `redemption:${row.id}`).execute();
    assert.equal(credits.length, 1);
    assert.deepEqual([credits[0]!.kind, Number(credits[0]!.amount)], ['topup', 123_456]);
    assert.equal(credits[0]!.reason, `通过兑换码充值 ＄0.246912 额度，兑换码ID ${row.id}`);
    assert.deepEqual([Number(row.status), Number(row.used_owner_id) > 0, Number(row.redeemed_time) > 0], [3, true, true]);
    await refusal(ledger.setCodeStatus(Number(row.id), CODE_STATUS.disabled, ADMIN), 'invalid');
    const listed = (await ledger.listCodes(String(row.id), { page: 1, size: 1 })).items[0]!;
    assert.deepEqual([listed.status, listed.used_user_id], [3, 21]);
    const redeemed = await audit('code.redeem');
    assert.deepEqual(JSON.parse(redeemed.at(-1)!.detail), { id: Number(row.id), owner: 'account-21', amount: 123_456 });
    assert.equal(redeemed.at(-1)!.actor, 'account:21');
    // The log shows the top-up, the user's top-ups list it.
    const log = await ledger.logs({ userId: 21, page: 1, size: 10 });
    assert.deepEqual(log.items.map((l) => [l.type, l.quota, l.content]), [[1, 123_456, credits[0]!.reason]]);
    const topups = await ledger.topups(21, { page: 1, size: 10 });
    assert.deepEqual(topups, {
      items: [{ id: Number(row.id), user_id: 21, amount: 123_456, money: 123_456 / 500_000, trade_no: `redemption:${row.id}`, payment_method: 'redemption', create_time: Number(credits[0]!.created_at), complete_time: Number(credits[0]!.created_at), status: 'success' }],
      total: 1,
    });
  });

  test('20 users racing for one code: one of them is credited', async () => {
    const [key] = await ledger.createCodes({ name: 'crowd', quota: 777, count: 1, expired_time: 0 }, ADMIN);
    const users = Array.from({ length: 20 }, (_, i) => 100 + i);
    const results = await Promise.allSettled(users.map((u) => ledger.redeem(u, key!)));
    const winners = users.filter((_, i) => results[i]!.status === 'fulfilled');
    assert.equal(winners.length, 1);
    for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof CustomerRefusal && r.reason.reason === 'code_invalid', String(r.reason));
    const credited = await s.ctx.db
      .selectFrom('edge_wallets')
      .innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id')
      .select(['edge_owners.name', 'edge_wallets.balance'])
      .where('edge_owners.name', 'in', users.map(customerOwnerName))
      .where('edge_wallets.balance', '>', 0)
      .execute();
    assert.deepEqual(credited.map((w) => [w.name, Number(w.balance)]), [[customerOwnerName(winners[0]!), 777]]);
  });

  test('unknown, used, expired, disabled, deleted and malformed codes are refused with one answer; nothing is credited', async () => {
    const [used, expired, disabled, deleted, fine] = await ledger.createCodes({ name: 'refuse', quota: 1000, count: 5, expired_time: nowSeconds() + 3600 }, ADMIN);
    assert.equal(await ledger.redeem(30, used!), 1000);
    await s.ctx.db.updateTable('edge_redemptions').set({ expired_time: nowSeconds() - 1 }).where('key_hash', '=', sha256(expired!)).execute();
    await ledger.setCodeStatus(Number((await codeRow(disabled!)).id), CODE_STATUS.disabled, ADMIN);
    await ledger.deleteCode(Number((await codeRow(deleted!)).id), ADMIN);
    const answers: string[] = [];
    for (const key of [used!, expired!, disabled!, deleted!, crypto.randomBytes(16).toString('hex'), '', '   ', 'x'.repeat(500), fine!.toUpperCase()]) {
      const e = await refusal(ledger.redeem(31, key), 'code_invalid');
      answers.push(e.detail);
      assert.ok(!e.detail.includes(key.trim() || '\u0000'), 'the code is not echoed');
    }
    assert.equal(new Set(answers).size, 1, 'one answer for all');
    assert.equal(await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'account-31').executeTakeFirst(), undefined, 'no owner made by a refused code');
    assert.equal(await ledger.redeem(31, ` ${fine!} `), 1000, 'surrounding spaces are ignored');
    assert.equal((await walletOf(s, 'account-31')).balance, 1000);
    await refusal(ledger.redeem(0, fine!), 'invalid');
  });

  test('top-ups list redeemed codes and imported balances, newest first, paged; another user sees none of them', async () => {
    const [a, b] = await ledger.createCodes({ name: 'mine', quota: 10, count: 2, expired_time: 0 }, ADMIN);
    await ledger.redeem(40, a!);
    await ledger.redeem(40, b!);
    const ownerId = Number((await s.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'account-40').executeTakeFirstOrThrow()).id);
    await s.ctx.db.insertInto('edge_credits').values({ credit_id: 'import:user:9', owner_id: ownerId, amount: 5000, wallet: '{}', created_at: 1000, kind: 'import', reason: '' }).execute();
    await s.ctx.db.insertInto('edge_credits').values({ credit_id: 'adjust:y', owner_id: ownerId, amount: 1, wallet: '{}', created_at: 2000, kind: 'adjust', reason: '' }).execute();
    const page = await ledger.topups(40, { page: 1, size: 10 });
    assert.equal(page.total, 3);
    assert.deepEqual(page.items.map((t) => t.payment_method), ['redemption', 'redemption', 'import']);
    assert.deepEqual(page.items.map((t) => t.amount), [10, 10, 5000]);
    const imported = page.items[2]!;
    assert.deepEqual([imported.trade_no, imported.create_time, Number.isSafeInteger(imported.id)], ['import:user:9', 1000, true]);
    assert.deepEqual((await ledger.topups(40, { page: 2, size: 2 })).items.map((t) => t.trade_no), ['import:user:9']);
    assert.deepEqual(await ledger.topups(41, { page: 1, size: 10 }), { items: [], total: 0 });
  });
});
