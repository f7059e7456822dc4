import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { eachDatabase } from '../helpers/services.js';

/**
 * Key rows are kept 500 ms (src/edge/keys/store.ts): a change made by another process — here raw SQL on the
 * shared database, which this process's stores never see — reaches every instance within that time; a
 * change made through the edge's own stores is seen by the next request.
 */
eachDatabase('edge key rows kept briefly', (variant) => {
  let a: EdgeServer;
  let b: EdgeServer;

  before(async () => {
    a = await startEdge(variant);
    b = await startEdge(variant, { shareWith: { dataDir: a.dataDir, databaseUrl: a.databaseUrl } });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  const models = (s: EdgeServer, key: string) => s.request('GET', '/v1/models', { token: key });

  test('a key revoked elsewhere is refused by both instances once 500 ms have passed; a revocation here at once', async () => {
    const key = await a.issueKey('acme');
    assert.equal((await models(a, key)).status, 200);
    assert.equal((await models(b, key)).status, 200);
    await a.ctx.db.updateTable('edge_keys').set({ revoked_at: 1 }).where('key_id', '=', parseCredential(key)!.keyId).execute();
    await sleep(600);
    for (const s of [a, b]) assert.equal((await models(s, key)).json.error?.code, 'invalid_api_key');

    const other = await a.issueKey('acme');
    assert.equal((await models(a, other)).status, 200);
    assert.equal((await a.cli('edge', 'key', 'revoke', parseCredential(other)!.keyId)).error, null);
    assert.equal((await models(a, other)).json.error?.code, 'invalid_api_key', 'the next request after a revocation here');
  });
});
