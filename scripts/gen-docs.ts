// Generates docs/operations.md from the operation registry (the same data as `npm run manifest`).
// `npm run docs` writes it; `tsx scripts/gen-docs.ts --check` exits 1 when the committed file is stale.
import fs from 'node:fs';
import { renderOperationsDoc } from './operations-doc.js';

const target = new URL('../docs/operations.md', import.meta.url);
const text = renderOperationsDoc();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (current !== text) {
    console.error('docs/operations.md is stale: run npm run docs');
    process.exit(1);
  }
  console.log('docs/operations.md is up to date');
} else {
  fs.writeFileSync(target, text);
  console.log('wrote docs/operations.md');
}
