import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChangeWatch } from './change-watch.js';

test('the counter is read at most every freshMs, in the background until trustMs, and the epoch grows when it moves', async () => {
  let now = 1000;
  let counter = 5;
  let reads = 0;
  let release: (() => void) | undefined;
  const gate = () => new Promise<void>((r) => (release = r));
  let gated = false;
  const watch = new ChangeWatch(
    async () => {
      reads++;
      if (gated) await gate();
      return counter;
    },
    250,
    750,
    () => now,
  );
  const first = watch.check();
  assert.ok(first, 'nothing read yet: the caller waits');
  await first;
  assert.deepEqual([reads, watch.epoch], [1, 0]);
  now += 249;
  assert.equal(watch.check(), undefined);
  assert.equal(reads, 1, 'fresh: not read');

  // Older than freshMs: read in the background, the caller goes on with the epoch it has.
  counter = 6;
  gated = true;
  now += 1;
  assert.equal(watch.check(), undefined);
  assert.equal(watch.check(), undefined);
  assert.equal(reads, 1 + 1, 'one read for both callers');
  assert.equal(watch.epoch, 0);
  release!();
  await new Promise((r) => setImmediate(r));
  assert.equal(watch.epoch, 1, 'the counter moved');

  // Past trustMs since the last read began, the caller waits for a read.
  now += 750;
  const waiting = watch.check();
  assert.ok(waiting);
  counter = 7;
  release!();
  await waiting;
  assert.equal(watch.epoch, 2);

  // A failed read: the background caller is not told; one past trustMs is.
  gated = false;
  const failing = new ChangeWatch(async () => { throw new Error('down'); }, 250, 750, () => now);
  await assert.rejects(failing.check()!, /down/);
  assert.ok(failing.check(), 'still unchecked: the next caller waits again');
});
