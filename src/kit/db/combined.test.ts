import assert from 'node:assert/strict';
import { test } from 'node:test';
import { combined } from './combined.js';

interface Asked {
  key?: number;
  n: number;
}

/** A combined "statement" that doubles its inputs and records each round it ran. */
function doubler(fail?: (inputs: Asked[]) => boolean) {
  const rounds: number[][] = [];
  const run = combined(async (_conn: object, inputs: Asked[]) => {
    rounds.push(inputs.map((a) => a.n));
    await new Promise((resolve) => setImmediate(resolve));
    if (fail?.(inputs)) throw new Error('round failed');
    return inputs.map((a) => a.n * 2);
  }, (a) => a.key);
  return { run, rounds };
}

test('calls made together on one connection run as one round; each gets its own output', async () => {
  const { run, rounds } = doubler();
  const conn = {};
  assert.deepEqual(await Promise.all([1, 2, 3].map((n) => run(conn, { key: n, n }))), [2, 4, 6]);
  assert.deepEqual(rounds, [[1, 2, 3]]);
});

test('calls that follow awaited work in the same turn join the round; other connections have their own', async () => {
  const { run, rounds } = doubler();
  const [a, b] = [{}, {}];
  const piece = async (conn: object, n: number) => {
    await Promise.resolve();
    await (async () => undefined)();
    return run(conn, { key: n, n });
  };
  assert.deepEqual(await Promise.all([piece(a, 1), piece(a, 2), piece(b, 3)]), [2, 4, 6]);
  assert.deepEqual(rounds, [[1, 2], [3]]);
});

test('calls of one key go in rounds one after the other, in order; a call without a key goes alone', async () => {
  const { run, rounds } = doubler();
  const conn = {};
  const outputs = await Promise.all([
    run(conn, { key: 7, n: 1 }),
    run(conn, { key: 8, n: 2 }),
    run(conn, { key: 7, n: 3 }),
    run(conn, { n: 4 }),
    run(conn, { key: 7, n: 5 }),
  ]);
  assert.deepEqual(outputs, [2, 4, 6, 8, 10]);
  assert.deepEqual(rounds, [[1, 2], [3], [5], [4]]);
});

test('a failed round fails its calls and every later round, not the rounds before it', async () => {
  const { run, rounds } = doubler((inputs) => inputs.some((a) => a.n === 3));
  const conn = {};
  const settled = await Promise.allSettled([run(conn, { key: 1, n: 1 }), run(conn, { key: 1, n: 3 }), run(conn, { key: 1, n: 5 }), run(conn, { key: 2, n: 2 })]);
  assert.deepEqual(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
    [2, 'round failed', 'round failed', 4],
  );
  assert.deepEqual(rounds, [[1, 2], [3]], 'the third round never ran');
});

test('a call made after a round was sent goes in the next dispatch', async () => {
  const { run, rounds } = doubler();
  const conn = {};
  const first = run(conn, { key: 1, n: 1 });
  await new Promise((resolve) => setImmediate(resolve));
  const second = run(conn, { key: 2, n: 2 });
  assert.deepEqual(await Promise.all([first, second]), [2, 4]);
  assert.deepEqual(rounds, [[1], [2]]);
});
