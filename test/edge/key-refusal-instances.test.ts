import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { importedKeyId, maskedKey } from '../../src/edge/keys/credentials.js';

// The bound every instance keeps (issue 33): an owner's suspension and a token's status or expiry are refused
// within 1 s on an instance that did not make the change (a key's revocation: test/edge/key-cache.test.ts).
const BOUND_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two edge instances on one database. Each change is written straight into the database, as another
 * process would make it: no code of these two instances is told, so only the key cache's lifetime brings
 * it to them. Both have just answered with the old row (it is cached) before the change.
 */
eachDatabase('edge owner and token changes across instances', (variant) => {
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
    for (const o of ['suspended', 'tokens']) assert.equal((await a.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', '1000')).error, null);
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

  test("a suspended owner's keys are refused on both instances within 1 s", async () => {
    const key = await a.issueKey('suspended');
    await refusedWithinBound(key, () => a.ctx.db.updateTable('edge_owners').set({ suspended_at: 1 }).where('name', '=', 'suspended').execute(), 403, 'user_disabled');
  });

  async function tokenKey(): Promise<{ key: string; keyId: string }> {
    const ownerId = Number((await a.ctx.db.selectFrom('edge_owners').select('id').where('name', '=', 'tokens').executeTakeFirstOrThrow()).id);
    const key = `sk-${crypto.randomBytes(36).toString('base64').replace(/[^A-Za-z0-9]/g, '').padEnd(48, 'x').slice(0, 48)}`;
    const keyId = importedKeyId(key);
    await a.ctx.db.insertInto('edge_keys').values({ key_id: keyId, owner_id: ownerId, secret_hash: crypto.createHash('sha256').update(key).digest('hex'), created_at: 1, revoked_at: null }).execute();
    await a.ctx.db
      .insertInto('edge_tokens')
      .values({ key_id: keyId, owner_id: ownerId, name: 't', key_hint: maskedKey(key), status: 1, expired_time: -1, remain_quota: 0, unlimited_quota: 1, model_limits_enabled: 0, model_limits: '', allow_ips: '', group_name: '', used_quota: 0, accessed_time: 0, created_time: 1, pending_key: null, pending_until: null, deleted_at: null } as never)
      .execute();
    return { key, keyId };
  }

  test('a token disabled or expired by another process is refused on both instances within 1 s', async () => {
    const disabled = await tokenKey();
    await refusedWithinBound(disabled.key, () => a.ctx.db.updateTable('edge_tokens').set({ status: 2 }).where('key_id', '=', disabled.keyId).execute(), 401, 'token_disabled');
    const expired = await tokenKey();
    await refusedWithinBound(expired.key, () => a.ctx.db.updateTable('edge_tokens').set({ expired_time: 1 }).where('key_id', '=', expired.keyId).execute(), 401, 'token_expired');
  });
});
