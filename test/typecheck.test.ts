import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

// The tests run through tsx, which strips types without checking them: this is where a type error fails.
test('the whole project type-checks (tsc --noEmit)', () => {
  const tsc = path.join('node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--pretty', 'false'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc reported:\n${r.stdout}${r.stderr}`);
});
