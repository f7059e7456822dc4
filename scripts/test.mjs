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
const summaryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'test-summary-'));
const summaryFile = path.join(summaryDir, 'summary.txt');
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
    '--test-reporter=./scripts/summary-reporter.mjs', `--test-reporter-destination=${path.join(summaryDir, 'reporter.out')}`,
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test', TEST_SUMMARY_FILE: summaryFile } },
);
const summary = fs.existsSync(summaryFile) ? fs.readFileSync(summaryFile, 'utf8').trim() : '0 passed, 1 failed, 0 skipped';
console.log(summary);
process.exit(result.status ?? 1);
