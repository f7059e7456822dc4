import { Counter, type CounterConfiguration } from 'prom-client';
import { children } from './children.js';

/** The pending count of one label set of a deferred counter. */
export interface PendingCount {
  inc(by?: number): void;
}

/**
 * A Counter whose increments are summed per label set in plain numbers and handed to prom-client when it is
 * collected (a scrape): prom-client hashes and checks the labels on every inc(), which costs more than the
 * rest of a hot path's bookkeeping. `of(...values)` (in labelNames order) resolves a label set once and keeps
 * it, so callers pass bounded values only (codes from a fixed list, kinds, sources); a series appears once it
 * was counted (inc(0) included), as with prom-client's inc().
 */
export function deferredCounter<L extends string>(config: Omit<CounterConfiguration<L>, 'collect'>) {
  const pending: { values: string[]; n: number; counted: boolean }[] = [];
  const counter: Counter<L> = new Counter<L>({
    ...config,
    collect() {
      for (const p of pending) {
        if (!p.counted) continue;
        if (p.values.length === 0) counter.inc(p.n);
        else counter.labels(...p.values).inc(p.n);
        p.n = 0;
      }
    },
  });
  const of = children<PendingCount>({
    labels(...values) {
      const entry = {
        values,
        n: 0,
        counted: false,
        inc(by = 1) {
          entry.n += by;
          entry.counted = true;
        },
      };
      pending.push(entry);
      return entry;
    },
  });
  return { counter, of };
}
