import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { deferredHistogram } from './deferred-histogram.js';

test("a deferred histogram exports what prom-client's Histogram exports for the same observations, text and JSON", async () => {
  const ours = new Registry();
  const theirs = new Registry();
  for (const r of [ours, theirs]) r.setDefaultLabels({ deployable: 'test' });
  const config = { name: 'latency_seconds', help: 'latency', labelNames: ['model', 'phase'] as const, buckets: [0.05, 0.1, 0.5, 1] };
  const deferred = deferredHistogram({ ...config, registers: [ours] });
  const plain = new Histogram({ ...config, labelNames: [...config.labelNames], registers: [theirs] });
  const observations: [string, string, number][] = [
    ['gpt', 'total', 0.01],
    ['gpt', 'total', 0.05],
    ['gpt', 'total', 0.07],
    ['gpt', 'first_byte', 0.3],
    ['gpt', 'total', 2.5],
    ['claude', 'total', 1],
  ];
  for (const [model, phase, v] of observations) {
    deferred.of(model, phase).observe(v);
    plain.labels(model, phase).observe(v);
  }
  deferred.of('never', 'observed');
  assert.equal(await ours.metrics(), await theirs.metrics());
  // prom-client adds `exemplar: null` to each bucket of its own; nothing else differs.
  const json = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => ({ ...m, values: m.values.map((v) => ({ value: v.value, labels: v.labels, metricName: (v as { metricName?: string }).metricName })) }));
  assert.deepEqual(await json(ours), await json(theirs));
  assert.match(await ours.metrics(), /latency_seconds_bucket\{le="0.1",deployable="test",model="gpt",phase="total"\} 3\n/);

  deferred.of('gpt', 'total').observe(0.2);
  plain.labels('gpt', 'total').observe(0.2);
  assert.equal(await ours.metrics(), await theirs.metrics());
});
