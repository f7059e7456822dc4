// node:test reporter that counts leaf tests. The count is written synchronously to TEST_SUMMARY_FILE after
// every result (so --test-force-exit cannot lose it); scripts/test.mjs prints it as the closing line
// "N passed, N failed, N skipped". The slowest files' times go to TEST_SUMMARY_FILE.slow (the run's time budget
// is watched with them).
import fs from 'node:fs';

export default async function* summary(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const file = process.env.TEST_SUMMARY_FILE;
  // Each file's time: the sum of its top-level tests and suites (a suite's includes its hooks).
  const perFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (file && event.data.nesting === 0 && event.data.file) {
      perFile.set(event.data.file, (perFile.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0));
      const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 12);
      fs.writeFileSync(`${file}.slow`, slowest.map(([f, ms]) => `${(ms / 1000).toFixed(1).padStart(6)} s  ${f}`).join('\n') + '\n');
    }
    if (event.data.details?.type === 'suite') continue;
    if (event.data.skip || event.data.todo) skipped++;
    else if (event.type === 'test:pass') passed++;
    else failed++;
    if (file) fs.writeFileSync(file, `${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
