// Runs the whole suite with node:test through tsx and ends with "N passed, N failed".
// Test files: src/**/*.test.ts and test/**/*.test.ts. Extra arguments narrow the files (substring match).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const filters = process.argv.slice(2);
const files = [...walk('src'), ...walk('test')].filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// The OpenAPI check runs last, over the answers the other files recorded (test/openapi-answers.test.ts).
const OPENAPI_CHECK = path.join('test', 'openapi-answers.test.ts');
const check = files.includes(OPENAPI_CHECK);
const others = files.filter((f) => f !== OPENAPI_CHECK);
const summaryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-summary-'));
const samples = path.join(summaryDir, 'api-samples');
fs.mkdirSync(samples);

/** Runs test files with the summary reporter; returns the exit status and the "N passed, …" counts. */
function run(list, env, name) {
  const summaryFile = path.join(summaryDir, `${name}.txt`);
  const result = spawnSync(
    process.execPath,
    [
      '--import', 'tsx',
      '--test',
      // A file whose tests finished exits even if a failed set-up left a connection open, and a test that
      // hangs fails after its timeout instead of stalling the run.
      '--test-force-exit',
      `--test-timeout=${process.env.TEST_TIMEOUT_MS ?? 180000}`,
      `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`,
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/summary-reporter.mjs', `--test-reporter-destination=${path.join(summaryDir, `${name}.out`)}`,
      ...list,
    ],
    { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test', TEST_SUMMARY_FILE: summaryFile, ...env } },
  );
  const text = fs.existsSync(summaryFile) ? fs.readFileSync(summaryFile, 'utf8') : '0 passed, 1 failed, 0 skipped';
  if (fs.existsSync(`${summaryFile}.slow`)) console.log(`slowest test files (${name}):\n${fs.readFileSync(`${summaryFile}.slow`, 'utf8')}`);
  return { status: result.status ?? 1, counts: (text.match(/\d+/g) ?? ['0', '1', '0']).map(Number) };
}

const runs = [];
if (others.length) runs.push(run(others, { API_SAMPLES: samples }, 'suite'));
if (check) runs.push(run([OPENAPI_CHECK], others.length ? { API_SAMPLES_CHECK: samples } : {}, 'openapi'));
const [passed, failed, skipped] = [0, 1, 2].map((i) => runs.reduce((n, r) => n + r.counts[i], 0));
fs.rmSync(summaryDir, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(runs.every((r) => r.status === 0) ? 0 : 1);
