import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import bcrypt from 'bcryptjs';
import { startAccount, type AccountServer } from '../helpers/account.js';

/** Samples per group (unknown user, known user with a wrong password); LOGIN_TIMING_SAMPLES overrides. */
const SAMPLES = Number(process.env.LOGIN_TIMING_SAMPLES ?? 80);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/**
 * Mann-Whitney: the probability that a sample of `a` is slower than one of `b` (ties count half). 0.5 means
 * the two cannot be told apart; a login that skips the hash for unknown users gives about 0.
 */
function probabilitySlower(a: number[], b: number[]): number {
  let wins = 0;
  for (const x of a) for (const y of b) wins += x > y ? 1 : x === y ? 0.5 : 0;
  return wins / (a.length * b.length);
}

let s: AccountServer;
before(async () => {
  s = await startAccount({ name: 'sqlite' });
  await s.createUser('timing-known', 'the right password 1');
  // A user imported from new-api keeps its bcrypt hash until its first successful login.
  const imported = await s.createUser('timing-imported', 'the right password 1');
  await s.ctx.database.db.updateTable('users').set({ password_hash: bcrypt.hashSync('the right password 1', 10) }).where('id', '=', imported).execute();
});
after(() => s?.close());

async function loginMs(username: string): Promise<{ ms: number; code: string }> {
  const started = process.hrtime.bigint();
  const r = await fetch(`${s.url}/api/user/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: 'a wrong password 2' }) });
  const body = (await r.json()) as { code: string };
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, code: `${r.status} ${body.code}` };
}

test('A25: an unknown username and a known one with a wrong password take the same time', async () => {
  const unknown: number[] = [];
  const known: number[] = [];
  const imported: number[] = [];
  const answers = new Set<string>();
  // Warm-up, then alternating pairs (in random order) so load changes on the machine hit both groups alike.
  for (let i = 0; i < 6; i++) await Promise.all([loginMs('timing-known'), loginMs(`nobody-${i}`)]);
  for (let i = 0; i < SAMPLES; i++) {
    const order = Math.random() < 0.5 ? (['known', 'unknown'] as const) : (['unknown', 'known'] as const);
    for (const which of order) {
      const r = await loginMs(which === 'known' ? 'timing-known' : `nobody-${i}`);
      (which === 'known' ? known : unknown).push(r.ms);
      answers.add(r.code);
    }
    if (i % 4 === 0) imported.push((await loginMs('timing-imported')).ms);
  }
  const mu = median(unknown);
  const mk = median(known);
  const p = probabilitySlower(unknown, known);
  console.log(
    `login timing (${SAMPLES} pairs): unknown user median ${mu.toFixed(1)} ms (p10 ${quantile(unknown, 0.1).toFixed(1)}, p90 ${quantile(unknown, 0.9).toFixed(1)}); ` +
      `known user, wrong password median ${mk.toFixed(1)} ms (p10 ${quantile(known, 0.1).toFixed(1)}, p90 ${quantile(known, 0.9).toFixed(1)}); ` +
      `median ratio ${(mu / mk).toFixed(2)}; P(unknown slower than known) ${p.toFixed(2)}; ` +
      `reported only: imported bcrypt user, wrong password median ${median(imported).toFixed(1)} ms (${imported.length} samples)`,
  );
  // Same answer for both (and no other).
  assert.deepEqual([...answers], ['200 LOGIN_FAILED']);
  // Loose bounds that a loaded 2-core box keeps; skipping the hash for unknown users gives ratio ~0.03, P ~0.02.
  assert.ok(mu / mk > 0.5 && mu / mk < 2, `median ratio ${(mu / mk).toFixed(2)} outside 0.5–2`);
  assert.ok(p > 0.15 && p < 0.85, `P(unknown slower) ${p.toFixed(2)} outside 0.15–0.85`);
});
