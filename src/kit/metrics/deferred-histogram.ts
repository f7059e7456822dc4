import type { Registry } from 'prom-client';
import { children } from './children.js';

/** One label set's observations, kept as plain numbers. */
export interface PendingHistogram {
  observe(value: number): void;
}

interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot counts those above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface Config<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registers: Registry[];
}

/**
 * A Prometheus histogram whose observations are counted per label set in plain numbers and exported as
 * prom-client exports a Histogram (the same lines), for a hot path: prom-client's Histogram checks and hashes
 * the labels on every observe(), even through a kept child. `of(...values)` (in labelNames order) resolves a
 * label set once and keeps it, so callers pass bounded values only; a series appears once observed.
 */
export function deferredHistogram<L extends string>(config: Config<L>) {
  const bounds = [...config.buckets].sort((a, b) => a - b);
  const series: Series[] = [];
  const metric = {
    name: config.name,
    help: config.help,
    type: 'histogram',
    aggregator: 'sum',
    labelNames: [...config.labelNames],
    reset() {
      for (const s of series) {
        s.counts.fill(0);
        s.sum = 0;
        s.count = 0;
      }
    },
    /** The export's values, each label set as prom-client's Histogram gives it to the registry's text format. */
    async getForPromString() {
      const values: { labels: Record<string, string | number>; sharedLabels: Record<string, string>; value: number; metricName: string }[] = [];
      for (const s of series) {
        if (s.count === 0) continue;
        let cumulative = 0;
        bounds.forEach((le, i) => {
          cumulative += s.counts[i]!;
          values.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: `${config.name}_bucket` });
        });
        values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${config.name}_bucket` });
        values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${config.name}_sum` });
        values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${config.name}_count` });
      }
      return { name: config.name, help: config.help, type: 'histogram', values, aggregator: 'sum' };
    },
    /** As getForPromString, each value's labels in one object (the registry's JSON). */
    async get() {
      const data = await metric.getForPromString();
      return { ...data, values: data.values.map(({ sharedLabels, labels, ...v }) => ({ ...v, labels: { ...sharedLabels, ...labels } })) };
    },
  };
  for (const registry of config.registers) registry.registerMetric(metric as never);
  const of = children<PendingHistogram>({
    labels(...values) {
      const labels: Record<string, string> = {};
      config.labelNames.forEach((name, i) => (labels[name] = values[i]!));
      const s: Series = { labels, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 };
      series.push(s);
      return {
        observe(value: number) {
          if (!Number.isFinite(value)) return;
          let i = 0;
          while (i < bounds.length && value > bounds[i]!) i++;
          s.counts[i]!++;
          s.sum += value;
          s.count++;
        },
      };
    },
  });
  return { of };
}
