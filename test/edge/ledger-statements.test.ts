import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { ownerIdOf } from '../helpers/runs.js';
import { uuidV7 } from '../../src/kit/crypto/uuid7.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { modelOf } from '../../src/edge/models/store.js';
import { LedgerWriter } from '../../src/edge/runs/ledger.js';
import { reserveRun } from '../../src/edge/runs/reserve.js';
import { insertToken } from '../../src/edge/customers/tokens/store.js';
import { settleRun } from '../../src/edge/runs/settle.js';

// The statements a call's ledger work sends (issue 33: on PostgreSQL and MySQL each one is a round trip), besides
// its batch's BEGIN and COMMIT: pinned, so that one more per call is a decision, not an accident. On PostgreSQL
// a batch first locks its owners' wallets (one statement), then its pieces' holds are one statement, their
// settlements two (the runs locked, then charged), and their rows one INSERT.
const PER_CALL = { postgres: { reservation: 3, settlement: 4 }, sqlite: { reservation: 4, settlement: 6 }, mysql: { reservation: 4, settlement: 6 } };
// An account user's call also locks its token and holds and settles on it (on PostgreSQL: the token's lock, and
// a second settlement statement once it is locked).
const PER_TOKEN_CALL = { postgres: { reservation: 4, settlement: 4 }, sqlite: { reservation: 6, settlement: 8 }, mysql: { reservation: 6, settlement: 8 } };

eachDatabase('edge ledger: statements per reservation and settlement', (v) => {
  let s: EdgeServer;
  before(async () => {
    s = await startEdge(v);
    assert.equal((await s.cli('edge', 'model', 'set', 'counted', '--reserve', '10')).error, null);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'counted', '--amount', '1000000')).error, null);
  });
  after(() => s?.close());

  test('a call: the hold and the charge one statement each on PostgreSQL; the rows of a batch one INSERT per table (one for all on PostgreSQL)', async () => {
    const keyId = parseCredential(await s.issueKey('counted'))!.keyId;
    const ownerId = await ownerIdOf(s, 'counted');
    const model = (await modelOf(s.ctx.db, 'counted'))!;
    let statements = 0;
    // Counted as results come back: prepared statements (kit/db/prepared.ts) are compiled once, so transformQuery would miss them.
    const counter: KyselyPlugin = { transformQuery: (a) => a.node, transformResult: async (a) => (statements++, a.result) };
    const ledger = new LedgerWriter({ ...s.ctx.database, db: s.ctx.database.db.withPlugin(counter) }, s.ctx.metrics);
    const ctx = { ...s.ctx, ledger };
    const reserve = (runId: string, tokenId = 0) => {
      const now = Date.now();
      const run = { run_id: runId, request_id: runId.slice(0, 8), owner_id: ownerId, key_id: keyId, input: '', api_version: 'v1', status: 'running' as const, traceparent: null, created_at: now, kind: 'sync' as const, format: 'chat', started_at: now, deadline_at: now + 60_000, token_id: tokenId };
      return ledger.write(ownerId, (trx, batch) => reserveRun(trx, batch, model, run));
    };
    const counted = async (work: () => Promise<unknown>) => {
      statements = 0;
      await work();
      return statements;
    };
    const call = async (tokenId = 0) => {
      const runId = uuidV7();
      const reservation = await counted(() => reserve(runId, tokenId));
      const settlement = await counted(() => settleRun(ctx, runId, { status: 'succeeded', cost: 7, source: 'sync' }, ownerId));
      return { reservation, settlement };
    };
    // Which owners have webhook endpoints is kept 1 s (edge/outbox/store.ts): read again just before counting
    // (after that second), so that no count includes it.
    const fresh = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1050));
      await call();
    };
    await fresh();
    assert.deepEqual(await call(), PER_CALL[v.name]);
    const token = { key_id: 'counted-token', owner_id: ownerId, name: 'counted', key_hint: 'sk-c**', status: 1, expired_time: -1, remain_quota: 100_000, unlimited_quota: 0, model_limits_enabled: 0, model_limits: '', allow_ips: '', group_name: '', created_time: 0, pending_key: null, pending_until: null };
    const tokenId = await insertToken(s.ctx.db, token);
    await fresh();
    assert.deepEqual(await call(tokenId), PER_TOKEN_CALL[v.name]);
    const row = await s.ctx.db.selectFrom('edge_tokens').select(['remain_quota', 'used_quota']).where('id', '=', tokenId).executeTakeFirstOrThrow();
    assert.deepEqual([Number(row.remain_quota), Number(row.used_quota)], [100_000 - 7, 7], 'the token was held on and settled');

    // Eight of one owner at once share a batch: their runs and their events are one INSERT each, one INSERT for
    // both on PostgreSQL, where one wallet's holds (and charges) are a statement each, one after the other.
    const ids = Array.from({ length: 8 }, () => uuidV7());
    await fresh();
    const [lock, holds, charges, inserts] = v.name === 'postgres' ? [1, 1, 2, 1] : [0, 2, 4, 2];
    assert.equal(await counted(() => Promise.all(ids.map((id) => reserve(id)))), lock + 8 * holds + inserts);
    assert.equal(await counted(() => Promise.all(ids.map((id) => settleRun(ctx, id, { status: 'succeeded', cost: 7, source: 'sync' }, ownerId)))), lock + 8 * charges + inserts);

    // Eight owners at once: on PostgreSQL their eight holds are one statement, and their eight charges two.
    const owners: { ownerId: number; keyId: string; runId: string; tokenId: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const keyId = parseCredential(await s.issueKey(`counted-${i}`))!.keyId;
      assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', `counted-${i}`, '--amount', '1000')).error, null);
      const owner = await ownerIdOf(s, `counted-${i}`);
      owners.push({ ownerId: owner, keyId, runId: uuidV7(), tokenId: await insertToken(s.ctx.db, { ...token, key_id: `counted-token-${i}`, owner_id: owner }) });
    }
    await fresh();
    const [together, alone] = v.name === 'postgres' ? [1, 0] : [0, 1];
    const reserveOf = (o: (typeof owners)[number], tokenId = 0) => {
      const now = Date.now();
      const run = { run_id: o.runId, request_id: 'eight', owner_id: o.ownerId, key_id: o.keyId, input: '', api_version: 'v1', status: 'running' as const, traceparent: null, created_at: now, kind: 'sync' as const, format: 'chat', started_at: now, deadline_at: now + 60_000, token_id: tokenId };
      return ledger.write(o.ownerId, (trx, batch) => reserveRun(trx, batch, model, run));
    };
    assert.equal(await counted(() => Promise.all(owners.map((o) => reserveOf(o)))), lock + together + 8 * alone * holds + inserts);
    assert.equal(await counted(() => Promise.all(owners.map((o) => settleRun(ctx, o.runId, { status: 'succeeded', cost: 7, source: 'sync' }, o.ownerId)))), lock + 2 * together + 8 * alone * charges + inserts);
    for (const o of owners) {
      const w = await s.ctx.db.selectFrom('edge_wallets').select(['balance', 'reserved']).where('owner_id', '=', o.ownerId).executeTakeFirstOrThrow();
      assert.deepEqual([Number(w.balance), Number(w.reserved)], [1000 - 7, 0], 'each wallet held and charged once');
    }

    // The same with a token each: on PostgreSQL the eight tokens are locked by one statement and held on by the
    // holds' statement; their settlements take two (the token locked with the run's read, then the charge).
    const [tokenReservation, tokenSettlement] = v.name === 'postgres' ? [lock + 2 + inserts, lock + 2 + inserts] : [8 * 4 + inserts, 8 * 6 + inserts];
    for (const o of owners) o.runId = uuidV7();
    await fresh();
    assert.equal(await counted(() => Promise.all(owners.map((o) => reserveOf(o, o.tokenId)))), tokenReservation);
    assert.equal(await counted(() => Promise.all(owners.map((o) => settleRun(ctx, o.runId, { status: 'succeeded', cost: 7, source: 'sync' }, o.ownerId)))), tokenSettlement);
    for (const o of owners) {
      const t = await s.ctx.db.selectFrom('edge_tokens').select(['remain_quota', 'used_quota']).where('id', '=', o.tokenId).executeTakeFirstOrThrow();
      assert.deepEqual([Number(t.remain_quota), Number(t.used_quota)], [100_000 - 7, 7], 'each token held on and settled once');
    }
    await ledger.close();
  });
});
