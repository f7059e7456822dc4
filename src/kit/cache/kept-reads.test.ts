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
