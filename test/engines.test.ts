import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean }>;
};
const own = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { engines: { node: string } };

test('every package in the lock file runs on the oldest Node the project supports and on this one', () => {
  const oldest = semver.minVersion(own.engines.node)!.version;
  assert.ok(semver.satisfies(oldest, '>=20 <21'), `engines.node ${own.engines.node} starts at Node 20 (CI runs on Node 20)`);
  const refused: string[] = [];
  for (const [where, pkg] of Object.entries(lock.packages)) {
    // Old lock files may list engines as an array of strings; only the object form names node.
    const range = pkg.engines && !Array.isArray(pkg.engines) ? pkg.engines.node : undefined;
    if (!where || !range) continue;
    for (const node of [oldest, process.versions.node]) {
      if (!semver.satisfies(node, range)) refused.push(`${where}@${pkg.version} needs node ${range}, not ${node}`);
    }
  }
  assert.deepEqual(refused, [], 'pin or replace these (package.json "overrides")');
});
