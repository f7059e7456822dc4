/** Runs the inputs of one round as one statement: one output per input, in their order. */
export type RunMany<C, In, Out> = (conn: C, inputs: In[]) => Promise<Out[]>;

interface Call<In, Out> {
  input: In;
  resolve(value: Out): void;
  reject(error: unknown): void;
}

const resolved = Promise.resolve();

/**
 * One statement for the like calls of pieces of work that run at the same time on one connection (a
 * transaction): DataLoader's idea, per connection. The calls made on `conn` before the current microtasks have
 * drained are run together by `runMany`, so N pieces pay for one round trip instead of N.
 *
 * Calls whose `keyOf` is equal go in separate rounds, one statement after the other, in the order they were
 * made (a statement cannot change one row twice, and the second must see the first's change); a call whose key
 * is undefined goes in a round of its own. When a round fails, it and every later round fail with its error.
 */
export function combined<C extends object, In, Out>(runMany: RunMany<C, In, Out>, keyOf: (input: In) => unknown): (conn: C, input: In) => Promise<Out> {
  const pending = new WeakMap<C, Call<In, Out>[]>();

  async function dispatch(conn: C) {
    const calls = pending.get(conn)!;
    pending.delete(conn);
    const rounds = roundsOf(calls, keyOf);
    for (let r = 0; r < rounds.length; r++) {
      const round = rounds[r]!;
      try {
        const outputs = await runMany(conn, round.map((c) => c.input));
        round.forEach((c, i) => c.resolve(outputs[i]!));
      } catch (error) {
        for (const later of rounds.slice(r)) for (const c of later) c.reject(error);
        return;
      }
    }
  }

  return (conn, input) =>
    new Promise<Out>((resolve, reject) => {
      const calls = pending.get(conn);
      if (calls) {
        calls.push({ input, resolve, reject });
        return;
      }
      pending.set(conn, [{ input, resolve, reject }]);
      // After every microtask queued so far (and those they queue) has run: pieces that continue from the same
      // answer join this round (DataLoader's schedule).
      void resolved.then(() => process.nextTick(() => void dispatch(conn)));
    });
}

/** Splits calls into rounds: a key's n-th call goes in round n; a call without a key goes in a round alone. */
function roundsOf<In, Out>(calls: Call<In, Out>[], keyOf: (input: In) => unknown): Call<In, Out>[][] {
  const rounds: Call<In, Out>[][] = [];
  const seen = new Map<unknown, number>();
  const alone: Call<In, Out>[][] = [];
  for (const call of calls) {
    const key = keyOf(call.input);
    if (key === undefined) {
      alone.push([call]);
      continue;
    }
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    (rounds[n] ??= []).push(call);
  }
  return rounds.concat(alone);
}
