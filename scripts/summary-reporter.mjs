// node:test reporter that counts leaf tests. The count is written synchronously to TEST_SUMMARY_FILE after
// every result (so --test-force-exit cannot lose it); scripts/test.mjs prints it as the closing line
// "N passed, N failed, N skipped".
import fs from 'node:fs';

export default async function* summary(source) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const file = process.env.TEST_SUMMARY_FILE;
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.details?.type === 'suite') continue;
    if (event.data.skip || event.data.todo) skipped++;
    else if (event.type === 'test:pass') passed++;
    else failed++;
    if (file) fs.writeFileSync(file, `${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
