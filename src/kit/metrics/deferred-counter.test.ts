import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { deferredCounter } from './deferred-counter.js';

test('a deferred counter scrapes the sums of its label sets, across scrapes; a series appears once counted, inc(0) included', async () => {
  const registry = new Registry();
  const calls = deferredCounter({ name: 'calls_total', help: 'calls', labelNames: ['kind', 'outcome'], registers: [registry] });
  const plain = deferredCounter({ name: 'batches_total', help: 'batches', registers: [registry] });
  const ok = calls.of('sync', 'ok');
  ok.inc();
  ok.inc(2);
  calls.of('sync', 'failed');
  calls.of('async', 'failed').inc(0);
  calls.of('async', 'ok').inc(5);
  plain.of().inc(4);
  let text = await registry.metrics();
  assert.match(text, /calls_total\{kind="sync",outcome="ok"\} 3\n/);
  assert.match(text, /calls_total\{kind="async",outcome="ok"\} 5\n/);
  assert.doesNotMatch(text, /kind="sync",outcome="failed"/);
  assert.match(text, /calls_total\{kind="async",outcome="failed"\} 0\n/);
  assert.match(text, /batches_total 4\n/);
  calls.of('sync', 'ok').inc();
  plain.of().inc();
  text = await registry.metrics();
  assert.match(text, /calls_total\{kind="sync",outcome="ok"\} 4\n/);
  assert.match(text, /batches_total 5\n/);
});
