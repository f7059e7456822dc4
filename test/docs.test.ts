import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { renderOperationsDoc } from '../scripts/operations-doc.js';

test('docs/operations.md matches the registry (run npm run docs after changing operations)', () => {
  assert.equal(fs.readFileSync('docs/operations.md', 'utf8'), renderOperationsDoc());
});

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [`${dir}/${e.name}`] : [],
  );
}

test('docs/configuration.md lists every variable the product reads', () => {
  const source = sources('src').map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  const doc = fs.readFileSync('docs/configuration.md', 'utf8');
  const pattern = /\(env, '([A-Z0-9_]+)'|\benv\.([A-Z][A-Z0-9_]+)|process\.env\.([A-Z][A-Z0-9_]+)/g;
  const names = new Set([...source.matchAll(pattern)].map((m) => m[1] ?? m[2] ?? m[3]));
  assert.ok(names.size > 20);
  for (const name of names) assert.ok(doc.includes(`\`${name}\``), `${name} is not documented`);
});
