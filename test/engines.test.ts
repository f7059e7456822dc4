import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; dev?: boolean }>;
};

/**
 * Development-only packages that declare a newer Node than they need, each with what shows it runs here: a
 * test of this suite that uses it on this Node. Never a package the product itself loads (dev: true).
 */
const DEV_ONLY_ON_OLDER_NODE: Record<string, string> = {
  // @google/genai 3.x declares node >=22; the calls that test makes with it run on Node 20.
  'node_modules/@google/genai': 'test/edge/gemini-sdk.test.ts',
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
    if (DEV_ONLY_ON_OLDER_NODE[where] && pkg.dev && fs.existsSync(DEV_ONLY_ON_OLDER_NODE[where]!)) continue;
    for (const node of [oldest, process.versions.node]) {
      if (!semver.satisfies(node, range)) refused.push(`${where}@${pkg.version} needs node ${range}, not ${node}`);
    }
  }
  assert.deepEqual(refused, [], 'pin or replace these (package.json "overrides")');
});
