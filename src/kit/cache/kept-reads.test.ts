import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { keptPerDatabase, KeptReads } from './kept-reads.js';

test('a found row is kept for its time, then read again; a missing one is never kept', async () => {
  const kept = new KeptReads<string, number>(50);
  let reads = 0;
  const read = async () => ++reads;
  assert.equal(await kept.get('a', read), 1);
  assert.equal(await kept.get('a', read), 1, 'kept');
  await sleep(60);
  assert.equal(await kept.get('a', read), 2, 'read again after its time');
  let misses = 0;
  const missing = async () => void misses++;
  await kept.get('b', missing);
  await kept.get('b', missing);
  assert.equal(misses, 2);
});

test('callers missing one key at once share one read; a failed shared read makes each read alone', async () => {
  const kept = new KeptReads<string, number>(60_000);
  let reads = 0;
  const slow = async () => (await sleep(10), ++reads);
  assert.deepEqual(await Promise.all([kept.get('a', slow), kept.get('a', slow), kept.get('a', slow)]), [1, 1, 1]);
  assert.equal(reads, 1);
  let failing = 0;
  const fails = async () => (await sleep(10), failing++, Promise.reject(new Error('aborted')));
  const own = async () => 7;
  const settled = await Promise.allSettled([kept.get('b', fails), kept.get('b', own)]);
  assert.deepEqual(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)), ['aborted', 7]);
  assert.equal(failing, 1);
});

test('forget drops every kept row of every database, and a read that raced it is not kept', async () => {
  const rows = keptPerDatabase<string, string>(60_000);
  const handle = () => {
    const adapter = {};
    return { getExecutor: () => ({ adapter }) };
  };
  const [one, two] = [handle(), handle()];
  let version = 'old';
  assert.equal(await rows.get(one, 'k', async () => version), 'old');
  assert.equal(await rows.get(two, 'k', async () => version), 'old');
  version = 'new';
  assert.equal(await rows.get(one, 'k', async () => version), 'old', 'kept until forgotten');
  const sameDatabase = { getExecutor: () => ({ adapter: one.getExecutor().adapter }) };
  assert.equal(await rows.get(sameDatabase, 'k', async () => version), 'old', 'a transaction of the same database reads the same rows');
  rows.forget();
  assert.equal(await rows.get(one, 'k', async () => version), 'new');
  assert.equal(await rows.get(two, 'k', async () => version), 'new');
  // A read that began before a forget and ended after it is not kept, nor one in the second after it.
  let release!: () => void;
  const racing = rows.get(one, 'r', () => new Promise<string>((r) => (release = () => r('stale'))));
  rows.forget();
  release();
  assert.equal(await racing, 'stale');
  assert.equal(await rows.get(one, 'r', async () => 'fresh'), 'fresh');
  assert.equal(await rows.get(one, 'r', async () => 'fresher'), 'fresher', 'nothing kept within a second of a forget');
});

test("forget(db) drops only that database's rows; a transaction of it forgets them too", async () => {
  const rows = keptPerDatabase<string, string>(60_000);
  const adapters = [{}, {}];
  const [one, two] = adapters.map((adapter) => ({ getExecutor: () => ({ adapter }) }));
  let version = 'old';
  await rows.get(one, 'k', async () => version);
  await rows.get(two, 'k', async () => version);
  version = 'new';
  rows.forget({ getExecutor: () => ({ adapter: adapters[0] }), isTransaction: true });
  assert.equal(await rows.get(one, 'k', async () => version), 'new');
  assert.equal(await rows.get(two, 'k', async () => version), 'old', 'the other database keeps its row');
});

test('with a change counter, rows are kept until it moves; transactions read through', async () => {
  let counter = 0;
  let counterReads = 0;
  const rows = keptPerDatabase<string, string>(60_000, {
    changes: async () => (counterReads++, counter),
    freshMs: 20,
    trustMs: 40,
  });
  const adapter = {};
  const db = { getExecutor: () => ({ adapter }), isTransaction: false };
  let version = 'old';
  assert.equal(await rows.get(db, 'k', async () => version), 'old');
  assert.equal(counterReads, 1, 'the first read waits for the counter');
  version = 'new';
  assert.equal(await rows.get(db, 'k', async () => version), 'old', 'kept while the counter is fresh');
  assert.equal(await rows.get({ ...db, isTransaction: true }, 'k', async () => version), 'new', 'a transaction reads through');
  counter++;
  await sleep(50);
  // Past trustMs the caller waits for the counter, sees it moved, and reads the row again.
  assert.equal(await rows.get(db, 'k', async () => version), 'new');
  version = 'newer';
  assert.equal(await rows.get(db, 'k', async () => version), 'new', 'kept again under the new count');
});
