import assert from 'node:assert/strict';
import os from 'node:os';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';

// The edge CLI's changes of money, prices, keys and webhooks are in the edge's audit log (edge_audit), as
// the console's are; `edge audit` prints it. A credit with an idempotency key credits once.
eachDatabase('edge audit log of CLI changes', (v) => {
  let s: EdgeServer;
  const actor = `cli:${os.userInfo().username}`;
  before(async () => {
    s = await startEdge(v);
  });
  after(() => s.close());

  test('edge wallet credit, key issue and revoke, model set, webhook add and remove each write an audit row', async () => {
    const ok = async (...args: string[]) => {
      const r = await s.cli(...args);
      assert.equal(r.error, null, args.join(' '));
      return r.lines;
    };
    await ok('edge', 'model', 'set', 'chat-x', '--reserve', '40', '--overdraft', '5');
    await ok('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '1000');
    const token = await s.issueKey('acme');
    const keyId = parseCredential(token)!.keyId;
    await ok('edge', 'key', 'revoke', keyId);
    assert.match((await s.cli('edge', 'key', 'revoke', keyId)).error ?? '', /no active key/);
    const added = await ok('edge', 'webhook', 'add', '--owner', 'acme', '--url', 'https://hooks.example.test/in?token=abc');
    const secret = added.at(-1)!;
    const endpointId = /endpoint (\S+)/.exec(added[0]!)![1]!;
    await ok('edge', 'webhook', 'remove', endpointId);

    const rows = (await ok('edge', 'audit', '--limit', '100')).map((l) => JSON.parse(l)).reverse();
    assert.deepEqual(
      rows.map((r) => [r.actor, r.operation, r.detail]),
      [
        [actor, 'model.set', { public_model_id: 'chat-x', reserve_amount: 40, gateway_model: null, group: 'default', overdraft: 5, enabled: true }],
        [actor, 'wallet.credit', { owner: 'acme', amount: 1000, balance: 1000 }],
        [actor, 'key.issue', { owner: 'acme', key_id: keyId }],
        [actor, 'key.revoke', { key_id: keyId }],
        [actor, 'webhook.add', { owner: 'acme', endpoint_id: endpointId, host: 'hooks.example.test' }],
        [actor, 'webhook.remove', { endpoint_id: endpointId }],
      ],
    );
    const stored = JSON.stringify(await s.ctx.db.selectFrom('edge_audit').selectAll().execute());
    for (const x of [token, parseCredential(token)!.secret, secret, 'token=abc']) assert.ok(!stored.includes(x), 'a secret in the audit log');
    assert.equal((await ok('edge', 'audit', '--limit', '2')).length, 2);
  });

  test('edge wallet credit --idempotency-key credits once and prints the same wallet', async () => {
    const credit = (amount: string) => s.cli('edge', 'wallet', 'credit', '--owner', 'once', '--amount', amount, '--idempotency-key', 'topup-7');
    const first = await credit('500');
    assert.equal(first.error, null);
    const again = await credit('500');
    assert.deepEqual(again, first);
    assert.match((await credit('600')).error ?? '', /credit id was used for another credit/);
    assert.match((await s.cli('edge', 'wallet', 'show', '--owner', 'once')).lines[0]!, /balance 500,/);
    const credits = await s.ctx.db.selectFrom('edge_audit').select('detail').where('operation', '=', 'wallet.credit').execute();
    assert.deepEqual(credits.map((r) => JSON.parse(r.detail)).filter((d) => d.owner === 'once'), [{ owner: 'once', amount: 500, balance: 500, credit_id: 'cli:topup-7' }]);
  });
});
