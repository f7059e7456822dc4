import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';
import { customerOwnerName, type CustomerHolder } from '../../src/contract/customer.js';
import { fill } from './new-api-data.js';
import { BALANCES, fillCustomers, NOW, STORED } from './new-api-customers.js';
import { databases, importCli, line } from './harness.js';

/**
 * The acceptance: after `import new-api`, a customer's old `sk-…` key calls /v1/chat/completions on
 * the edge (through the gateway to a fake upstream) and is charged from the imported balance, to the unit.
 */
eachDatabase('import new-api: an imported customer calls the edge with the old key', (v) => {
  let s: AccountServer;
  let d: Awaited<ReturnType<typeof databases>>;
  let st: Stack;
  // The account reaches the edge's customer port as a co-hosted edge hands it over.
  const holder: CustomerHolder = { port: null };
  const chat = (key: string, model = 'gpt-4o') => st.edge.request('POST', '/v1/chat/completions', { token: key, body: { model, messages: [{ role: 'user', content: 'hi' }] } });
  const wallet = async (userId: number) => {
    const o = await st.edge.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', customerOwnerName(userId)).executeTakeFirstOrThrow();
    const w = await st.edge.ctx.db.selectFrom('edge_wallets').selectAll().where('owner_id', '=', o.id).executeTakeFirstOrThrow();
    return [Number(w.balance), Number(w.reserved), Number(w.used_quota), Number(w.request_count)];
  };
  const token = (name: string) => st.edge.ctx.db.selectFrom('edge_tokens').selectAll().where('name', '=', name).executeTakeFirstOrThrow();

  before(async () => {
    s = await startAccount(v, { customers: holder });
    d = await databases(v, s);
    await fill(d.source);
    await fillCustomers(d.source, NOW());
    st = await startStack(v);
    holder.port = st.edge.services.customers;
    for (const model of ['gpt-4o', 'text-embedding-3-small']) assert.equal((await st.edge.cli('edge', 'model', 'set', model, '--reserve', '500')).error, null);
    const to = { gatewayUrl: d.gatewayUrl, edgeUrl: st.edge.databaseUrl };
    for (const part of ['account', 'edge']) {
      const r = await importCli(s, to, '--from', d.from, '--only', part);
      assert.equal(r.error, null, r.text);
    }
  });
  after(async () => {
    await st?.close();
    await d?.close();
    await s?.close();
  });

  test("alice's sk- key is served and charged from her imported balance; the token and wallet count the call", async () => {
    const alice = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id);
    assert.deepEqual(await wallet(alice), [BALANCES.alice, 0, 99_000, 321]);
    const before = await token('alice main');
    const r = await chat(`sk-${STORED.aliceMain}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.choices[0].message.content, 'Hello there');
    assert.deepEqual(await wallet(alice), [BALANCES.alice - CHAT_COST, 0, 99_000 + CHAT_COST, 322]);
    const after = await token('alice main');
    assert.equal(Number(after.used_quota), Number(before.used_quota) + CHAT_COST);
    assert.ok(Number(after.accessed_time) >= NOW() - 60);
    assert.ok(!st.edge.everything().includes(STORED.aliceMain), 'the key in an answer or the log');
    // What the account service's customer API reads through the port: the balance, the masked key, no reveal.
    const port = st.edge.services.customers;
    assert.deepEqual(await port.balance(alice), { quota: BALANCES.alice - CHAT_COST, used_quota: 99_000 + CHAT_COST, request_count: 322 });
    const shown = await port.token(alice, Number(after.id));
    assert.deepEqual([shown.name, shown.key, shown.group, shown.unlimited_quota], ['alice main', `sk-${STORED.aliceMain[0]}**********${STORED.aliceMain.slice(-4)}`, 'vip', true]);
    await assert.rejects(port.revealKeys(alice, [Number(after.id)]), (e: any) => e.reason === 'key_already_shown');
  });

  test('the key as new-api stored it (without sk-), a disabled token, a deleted one, a disabled user\'s and a model outside the limits are refused and charge nothing', async () => {
    const bob = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'bob').executeTakeFirstOrThrow()).id);
    const alice = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id);
    const aliceBefore = await wallet(alice);
    assert.equal((await chat(STORED.aliceMain)).status, 401);
    assert.equal((await chat(`sk-${STORED.aliceOld}`)).status, 401);
    assert.equal((await chat(`sk-${STORED.gone}`)).status, 401);
    assert.equal((await chat(`sk-${STORED.aliceMain}`, 'text-embedding-3-small')).status, 403);
    assert.deepEqual(await wallet(alice), aliceBefore);
    // bob is disabled in new-api, whose relay refuses a banned user's tokens: his key is off until an admin enables him.
    const bobBefore = await wallet(bob);
    const banned = await chat(`sk-${STORED.bob}`);
    assert.deepEqual([banned.status, banned.json.error.code], [403, 'user_disabled']);
    assert.deepEqual(await wallet(bob), bobBefore);
    await s.services.users.enable(bob, 'account:1');
    // bob's token has 20,000 units of its own: the call comes off both.
    const r = await chat(`sk-${STORED.bob}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(await wallet(bob), [BALANCES.bob - CHAT_COST, 0, 7 + CHAT_COST, 3]);
    assert.equal(Number((await token('bob')).remain_quota), 20_000 - CHAT_COST);
  });

  test('the report of a later import shows the wallets unchanged (the edge spent them; the import does not put them back)', async () => {
    const r = await importCli(s, { gatewayUrl: d.gatewayUrl, edgeUrl: st.edge.databaseUrl }, '--from', d.from, '--only', 'edge');
    assert.equal(r.error, null, r.text);
    assert.equal(line(r.text, 'wallets'), 'wallets: read 8, imported 0, updated 0, unchanged 7, skipped 1');
    assert.equal(line(r.text, 'tokens'), 'tokens: read 7, imported 0, updated 0, unchanged 4, skipped 3');
    const alice = Number((await s.ctx.database.db.selectFrom('users').select('id').where('username', '=', 'alice').executeTakeFirstOrThrow()).id);
    assert.deepEqual(await wallet(alice), [BALANCES.alice - CHAT_COST, 0, 99_000 + CHAT_COST, 322]);
  });
});
