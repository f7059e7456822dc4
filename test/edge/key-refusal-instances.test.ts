import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { insertImportedKey, startEdge, type EdgeServer } from '../helpers/edge.js';
import { until } from '../helpers/runs.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { updateToken } from '../../src/edge/import/store.js';
import type { TokenSettings } from '../../src/contract/customer.js';

// The bound every instance keeps (issue 33): a key's revocation, an owner's suspension or resumption and a
// token's change, status or deletion are seen within 1 s on an instance that did not make the change (key rows
// are kept a minute while the change counter edge_key_changes stays, read at most every 250 ms and trusted
// 750 ms: src/edge/keys/store.ts), and by the next request on the instance that made it. The other instance is
// polled until it refuses, giving up long before a minute: a writer that forgot to bump the counter fails here.
const GIVE_UP_MS = 5000;
// Webhook endpoints are kept 1 s per instance (src/edge/outbox/store.ts), with no counter.
const BOUND_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SETTINGS: TokenSettings = { name: 't', expired_time: -1, remain_quota: 0, unlimited_quota: true, model_limits_enabled: false, model_limits: '', allow_ips: '', group: '' };

/** Two edge instances on one database, each with its own connections and kept key rows. */
eachDatabase('edge key, owner and token changes across instances', (variant) => {
  let a: EdgeServer;
  let b: EdgeServer;
  let n = 0;
  let nextUser = 1;
  const body = { publicModelId: 'gpt-test', input: 'x' };
  const admit = (s: EdgeServer, key: string) => s.respond(key, body, { 'idempotency-key': `k-${++n}` });
  const outcome = async (s: EdgeServer, key: string) => {
    const r = await admit(s, key);
    return r.status === 202 ? 'accepted' : `${r.status} ${r.json?.error?.code}`;
  };

  before(async () => {
    a = await startEdge(variant);
    b = await startEdge(variant, { shareWith: { dataDir: a.dataDir, databaseUrl: a.databaseUrl }, env: a.env.REDIS_KEY_PREFIX ? { REDIS_KEY_PREFIX: a.env.REDIS_KEY_PREFIX } : {} });
    assert.equal((await a.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1')).error, null);
    for (const o of ['revoked', 'kept', 'tokens', 'hooks']) assert.equal((await a.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', '100000')).error, null);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  /**
   * Both instances answer `key` (so each keeps its row); `change` runs on instance a, whose next request gets
   * `expected`; instance b is polled until it does too.
   */
  async function seenOnBoth(key: string, change: () => Promise<unknown>, expected: string) {
    for (const s of [a, b]) assert.notEqual(await outcome(s, key), expected, 'before the change');
    await change();
    assert.equal(await outcome(a, key), expected, 'the instance that made the change, at once');
    let last = '';
    await until(`instance b answering ${expected}`, async () => (last = await outcome(b, key)) === expected, GIVE_UP_MS).catch((e: Error) => {
      throw new Error(`${e.message} (it answered ${last})`);
    });
  }

  test('a key revoked on one instance (admin, CLI key service) is refused there at once and on the other within the bound', async () => {
    const key = await a.issueKey('revoked');
    await seenOnBoth(key, () => a.services.admin.revokeKey(parseCredential(key)!.keyId, 'test'), '401 invalid_api_key');
  });

  test('revoking a key that is revoked already, or none, changes nothing and so bumps nothing', async () => {
    const key = await a.issueKey('twice');
    const keyId = parseCredential(key)!.keyId;
    const changes = async () => Number((await a.ctx.db.selectFrom('edge_key_changes').select('changes').executeTakeFirstOrThrow()).changes);
    const before = await changes();
    assert.equal(await a.services.admin.revokeKey(keyId, 'test'), true);
    assert.equal(await changes(), before + 1);
    assert.equal(await a.services.admin.revokeKey(keyId, 'test'), false);
    assert.equal(await a.services.admin.revokeKey('no-such-key-id', 'test'), false);
    assert.equal(await changes(), before + 1);
    assert.equal(await outcome(a, key), '401 invalid_api_key');
  });

  test('a key revoked by a third process (the CLI, its own connection) is refused by both instances within the bound', async () => {
    const key = await a.issueKey('revoked');
    for (const s of [a, b]) assert.equal(await outcome(s, key), 'accepted');
    assert.equal((await a.cli('edge', 'key', 'revoke', parseCredential(key)!.keyId)).error, null);
    for (const s of [a, b]) await until('refused', async () => (await outcome(s, key)) === '401 invalid_api_key', GIVE_UP_MS);
  });

  test('without a bump of the counter a row stays kept: a change written behind the stores is not seen', async () => {
    const key = await a.issueKey('kept');
    for (const s of [a, b]) assert.equal(await outcome(s, key), 'accepted');
    await a.ctx.db.updateTable('edge_keys').set({ revoked_at: 1 }).where('key_id', '=', parseCredential(key)!.keyId).execute();
    // Past the counter's whole bound (read again several times meanwhile): still the kept row.
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await outcome(b, key), 'accepted');
    }
    // What a writer does: bump the counter (changeKeys), and the change is seen.
    await a.ctx.db.updateTable('edge_key_changes').set((eb) => ({ changes: eb('changes', '+', 1) })).execute();
    for (const s of [a, b]) await until('refused', async () => (await outcome(s, key)) === '401 invalid_api_key', GIVE_UP_MS);
  });

  test("an account user disabled and enabled again on one instance: both refuse the user's keys, then accept them", async () => {
    const port = a.services.customers;
    const userId = nextUser++;
    await port.grant(userId, 100_000, `signup:${userId}`, 'system:test', '');
    const { key } = await port.createToken(userId, SETTINGS);
    await seenOnBoth(key, () => port.setUserEnabled(userId, false, 'system:test'), '403 user_disabled');
    await seenOnBoth(key, () => port.setUserEnabled(userId, true, 'system:test'), 'accepted');
  });

  test('a token changed, disabled, enabled or deleted through the customer port on one instance: both follow', async () => {
    const port = a.services.customers;
    const userId = nextUser++;
    await port.grant(userId, 100_000, `signup:${userId}`, 'system:test', '');
    const { key, token } = await port.createToken(userId, SETTINGS);
    await seenOnBoth(key, () => port.setTokenStatus(userId, token.id, 2), '401 token_disabled');
    await seenOnBoth(key, () => port.setTokenStatus(userId, token.id, 1), 'accepted');
    await seenOnBoth(key, () => port.updateToken(userId, token.id, { ...SETTINGS, model_limits_enabled: true, model_limits: 'other' }), '403 model_not_allowed');
    await seenOnBoth(key, () => port.updateToken(userId, token.id, SETTINGS), 'accepted');
    await seenOnBoth(key, () => port.deleteTokens(userId, [token.id]), '401 invalid_api_key');
  });

  test('an imported token changed by the importer on one instance: both follow', async () => {
    const ownerId = Number((await a.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'tokens').executeTakeFirstOrThrow()).id);
    const t = await insertImportedKey(a.ctx.db, ownerId, { name: 't', remain_quota: 0, unlimited_quota: 1 });
    const id = Number((await a.ctx.db.selectFrom('edge_tokens').select('id').where('key_id', '=', t.keyId).executeTakeFirstOrThrow()).id);
    await seenOnBoth(t.key, () => updateToken(a.ctx.db, id, { expired_time: 1 }), '401 token_expired');
  });

  test('an endpoint added or removed by another process counts for the events of both instances within 1 s', async () => {
    const key = await a.issueKey('hooks');
    const ownerId = Number((await a.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'hooks').executeTakeFirstOrThrow()).id);
    /** The endpoints the events of an admitted run were queued to. */
    const deliveredTo = async (s: EdgeServer) => {
      const r = await admit(s, key);
      assert.equal(r.status, 202);
      const rows = await a.ctx.db
        .selectFrom('edge_deliveries')
        .innerJoin('edge_outbox', 'edge_outbox.event_id', 'edge_deliveries.event_id')
        .select('edge_deliveries.endpoint_id')
        .where('edge_outbox.aggregate_id', '=', r.json.runId)
        .execute();
      return [...new Set(rows.map((d) => d.endpoint_id))];
    };
    // Both instances have just read that the owner has no endpoint.
    for (const s of [a, b]) assert.deepEqual(await deliveredTo(s), []);
    const endpointId = crypto.randomUUID();
    await a.ctx.db.insertInto('edge_webhooks').values({ endpoint_id: endpointId, owner_id: ownerId, url: 'https://hooks.example.invalid/in', secret: 'whsec_test', created_at: 1, removed_at: null } as never).execute();
    await sleep(BOUND_MS);
    for (const s of [a, b]) assert.deepEqual(await deliveredTo(s), [endpointId]);
    await a.ctx.db.updateTable('edge_webhooks').set({ removed_at: 2 }).where('endpoint_id', '=', endpointId).execute();
    await sleep(BOUND_MS);
    for (const s of [a, b]) assert.deepEqual(await deliveredTo(s), []);
  });
});
