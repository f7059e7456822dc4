import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Product } from '../stack.js';

/** Runs last: stops the servers (their buffered log lines are written on exit) and looks for every secret the suite saw. */
export function secretCases(product: () => Product) {
  test('no key, code, password or session token appears in the servers\' output', async () => {
    const p = product();
    await p.stop();
    const output = p.output();
    assert.match(output, /listening/, 'the servers\' output was captured');
    assert.ok(p.secrets.size >= 10, `the suite collected the secrets it saw (${p.secrets.size})`);
    const leaked = [...p.secrets].filter((s) => s.length >= 8 && output.includes(s));
    assert.deepEqual(
      leaked.map((s) => `${s.slice(0, 6)}…`),
      [],
      `secrets in the output:\n${leaked.map((s) => output.split('\n').find((l) => l.includes(s))).join('\n')}`,
    );
  });
}
