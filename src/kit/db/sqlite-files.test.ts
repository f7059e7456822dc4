import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './index.js';

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

async function writeSomething(file: string) {
  const d = await openDatabase<any>(`sqlite://${file}`);
  await sql`create table if not exists t (v text)`.execute(d.db);
  await sql`insert into t values ('x')`.execute(d.db);
  return d;
}

test('a new SQLite file and its -wal and -shm are 0600 whatever the umask', { skip: process.platform === 'win32' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-modes-'));
  for (const umask of [0o022, 0o000]) {
    const previous = process.umask(umask);
    try {
      const file = path.join(dir, `db-${umask.toString(8)}.sqlite`);
      const d = await writeSomething(file);
      try {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(modeOf(f).toString(8), '600', `${path.basename(f)} with umask ${umask.toString(8)}`);
      } finally {
        await d.close();
      }
    } finally {
      process.umask(previous);
    }
  }
});

test('an existing world-readable file and the -wal an earlier run left are narrowed to 0600 on open', { skip: process.platform === 'win32' }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-modes-'));
  const file = path.join(dir, 'old.sqlite');
  await (await writeSomething(file)).close();
  fs.chmodSync(file, 0o644);
  fs.writeFileSync(`${file}-wal`, '', { mode: 0o644 });
  fs.chmodSync(`${file}-wal`, 0o644);
  const d = await writeSomething(file);
  try {
    assert.equal(modeOf(file).toString(8), '600');
    assert.equal(modeOf(`${file}-wal`).toString(8), '600');
  } finally {
    await d.close();
  }
  const readOnly = path.join(dir, 'source.sqlite');
  await (await writeSomething(readOnly)).close();
  fs.chmodSync(readOnly, 0o644);
  await (await openDatabase<any>(`sqlite://${readOnly}`, { readOnly: true })).close();
  assert.equal(modeOf(readOnly).toString(8), '644', 'a file opened read-only (an import source) is left as it is');
});
