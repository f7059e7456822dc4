import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { insertImportedKey, startEdge, type EdgeServer } from '../helpers/edge.js';
import crypto from 'node:crypto';
import { parseCredential } from '../../src/edge/keys/credentials.js';

// The bound every instance keeps (issue 33): a key's revocation, an owner's suspension and a token's status or
// expiry are refused within 1 s on an instance that did not make the change (key rows are kept 0.5 s,
// src/edge/keys/store.ts); a change made through an instance's own stores by its next request.
const BOUND_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two edge instances on one database. Each change is written straight into the database, as another
 * process would make it: no code of these two instances is told, so only the key cache's lifetime brings
 * it to them. Both have just answered with the old row (it is cached) before the change.
 */
eachDatabase('edge key, owner and token changes across instances', (variant) => {
  let a: EdgeServer;
  let b: EdgeServer;
  let n = 0;
  const body = { publicModelId: 'gpt-test', input: 'x' };
  const admit = (s: EdgeServer, key: string) => s.respond(key, body, { 'idempotency-key': `k-${++n}` });
  const codeOf = (r: { json: any }) => r.json?.error?.code;

  before(async () => {
    a = await startEdge(variant);
    b = await startEdge(variant, { shareWith: { dataDir: a.dataDir, databaseUrl: a.databaseUrl }, env: a.env.REDIS_KEY_PREFIX ? { REDIS_KEY_PREFIX: a.env.REDIS_KEY_PREFIX } : {} });
    assert.equal((await a.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1')).error, null);
    for (const o of ['suspended', 'revoked', 'tokens', 'hooks']) assert.equal((await a.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', '1000')).error, null);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  /** Both instances answer `key` (so each holds its row), `change` runs, and after the bound both refuse it. */
  async function refusedWithinBound(key: string, change: () => Promise<unknown>, status: number, code: string) {
    for (const s of [a, b]) assert.equal((await admit(s, key)).status, 202);
    await change();
    await sleep(BOUND_MS);
    for (const s of [a, b]) {
      const r = await admit(s, key);
      assert.deepEqual([r.status, codeOf(r)], [status, code]);
    }
  }

  test('a key revoked elsewhere is refused by both instances once 500 ms have passed; a revocation here at once', async () => {
    const key = await a.issueKey('revoked');
    for (const s of [a, b]) assert.equal((await admit(s, key)).status, 202);
    await a.ctx.db.updateTable('edge_keys').set({ revoked_at: 1 }).where('key_id', '=', parseCredential(key)!.keyId).execute();
    await sleep(600);
    for (const s of [a, b]) assert.equal(codeOf(await admit(s, key)), 'invalid_api_key');

    const other = await a.issueKey('revoked');
    assert.equal((await admit(a, other)).status, 202);
    assert.equal((await a.cli('edge', 'key', 'revoke', parseCredential(other)!.keyId)).error, null);
    assert.equal(codeOf(await admit(a, other)), 'invalid_api_key', 'the next request after a revocation here');
  });

  test("a suspended owner's keys are refused on both instances within 1 s", async () => {
    const key = await a.issueKey('suspended');
    await refusedWithinBound(key, () => a.ctx.db.updateTable('edge_owners').set({ suspended_at: 1 }).where('name', '=', 'suspended').execute(), 403, 'user_disabled');
  });

  async function tokenKey(): Promise<{ key: string; keyId: string }> {
    const ownerId = Number((await a.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'tokens').executeTakeFirstOrThrow()).id);
    return insertImportedKey(a.ctx.db, ownerId, { name: 't', remain_quota: 0, unlimited_quota: 1 });
  }

  test('a token disabled or expired by another process is refused on both instances within 1 s', async () => {
    const disabled = await tokenKey();
    await refusedWithinBound(disabled.key, () => a.ctx.db.updateTable('edge_tokens').set({ status: 2 }).where('key_id', '=', disabled.keyId).execute(), 401, 'token_disabled');
    const expired = await tokenKey();
    await refusedWithinBound(expired.key, () => a.ctx.db.updateTable('edge_tokens').set({ expired_time: 1 }).where('key_id', '=', expired.keyId).execute(), 401, 'token_expired');
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
