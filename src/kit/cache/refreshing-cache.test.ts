import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RefreshingCache } from './refreshing-cache.js';

/** A load whose calls are counted and which each return the next number, once released. */
function loader() {
  let calls = 0;
  const waiting: (() => void)[] = [];
  let failNext = false;
  const load = () => {
    const n = ++calls;
    const fail = failNext;
    failNext = false;
    return new Promise<number>((resolve, reject) => waiting.push(() => (fail ? reject(new Error('load failed')) : resolve(n))));
  };
  return {
    load,
    calls: () => calls,
    release: async () => {
      for (const w of waiting.splice(0)) w();
      await new Promise((r) => setImmediate(r));
    },
    failNext: () => void (failNext = true),
  };
}

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A cache fresh for 100 ms and served stale up to 200 ms, on a clock the test moves, with a fresh loader. */
function fixture() {
  const c = clock();
  return { c, cache: new RefreshingCache<string, number>(100, 200, 10, c.now), l: loader() };
}

test('RefreshingCache: a missing key is computed once for every caller waiting on it, then served fresh', async () => {
  const { c, cache, l } = fixture();
  const a = cache.get('k', l.load);
  const b = cache.get('k', l.load);
  await l.release();
  assert.deepEqual([await a, await b], [1, 1]);
  assert.equal(l.calls(), 1);
  c.advance(99);
  assert.equal(await cache.get('k', l.load), 1);
  assert.equal(l.calls(), 1);
});

test('RefreshingCache: a stale value is served at once while one refresh runs; a too old one is waited for', async () => {
  const { c, cache, l } = fixture();
  const first = cache.get('k', l.load);
  await l.release();
  assert.equal(await first, 1);
  c.advance(150);
  assert.equal(await cache.get('k', l.load), 1);
  assert.equal(await cache.get('k', l.load), 1);
  assert.equal(l.calls(), 2, 'one background refresh for both stale reads');
  await l.release();
  assert.equal(await cache.get('k', l.load), 2);
  c.advance(250);
  let settled = false;
  const waited = cache.get('k', l.load).then((v) => ((settled = true), v));
  await new Promise((r) => setImmediate(r));
  assert.equal(settled, false, 'a value older than staleMs is not served');
  await l.release();
  assert.equal(await waited, 3);
});

test('RefreshingCache: clear() drops values and running computations; their results are not kept', async () => {
  const { c, cache, l } = fixture();
  const before = cache.get('k', l.load);
  cache.clear();
  const after = cache.get('k', l.load);
  assert.equal(l.calls(), 2, 'a caller after clear() does not share the earlier computation');
  await l.release();
  assert.deepEqual([await before, await after], [1, 2]);
  assert.equal(await cache.get('k', l.load), 2);
  assert.equal(l.calls(), 2);
});

test('RefreshingCache: a failed load reaches its waiting callers and is not kept; a failed refresh keeps the stale value', async () => {
  const { c, cache, l } = fixture();
  l.failNext();
  const failing = assert.rejects(cache.get('k', l.load), /load failed/);
  await l.release();
  await failing;
  const ok = cache.get('k', l.load);
  await l.release();
  assert.equal(await ok, 2);
  c.advance(150);
  l.failNext();
  assert.equal(await cache.get('k', l.load), 2);
  await l.release();
  assert.equal(await cache.get('k', l.load), 2, 'still the stale value after the refresh failed');
  assert.equal(l.calls(), 4, 'and a new refresh was started');
  await l.release();
});

test('RefreshingCache: holds at most maxEntries keys, dropping the oldest written', async () => {
  const cache = new RefreshingCache<number, number>(1000, 2000, 2);
  let calls = 0;
  const load = async () => ++calls;
  for (const k of [1, 2, 3]) await cache.get(k, load);
  await cache.get(3, load);
  await cache.get(2, load);
  assert.equal(calls, 3);
  await cache.get(1, load);
  assert.equal(calls, 4, 'key 1 was dropped');
});
