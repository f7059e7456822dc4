import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { tempDir } from '../../../test/helpers/services.js';
import { openDatabase, sqliteHandleOf } from './index.js';

const RESTART_BYTES = 256 * 1024;
/** Checkpoints every 10 ms, the WAL started over past 256 KiB. */
const FAST = { intervalMs: 10, restartBytes: RESTART_BYTES };
const ROW = 'x'.repeat(4000);

const walSize = (file: string) => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);

async function until(what: string, done: () => boolean) {
  for (let i = 0; i < 1000 && !done(); i++) await sleep(20);
  assert.ok(done(), what);
}

test('once the checkpoint thread runs the commits never checkpoint, and the WAL stays bounded under writes', async () => {
  const file = path.join(tempDir('checkpoint-'), 'db.sqlite');
  const database = await openDatabase<any>(`sqlite://${file}`, { checkpoint: FAST });
  const h = sqliteHandleOf(database.db)!;
  h.exec('create table t (id integer primary key, v text not null)');
  const insert = h.prepare('insert into t (v) values (?)');
  insert.run(ROW);
  await until('the thread takes the checkpoints over', () => h.pragma('wal_autocheckpoint', { simple: true }) === 0);
  let most = 0;
  // 12 MB through the WAL, 48 times its restart size: without the thread (and autocheckpoint off) it
  // would hold all of it.
  for (let batch = 0; batch < 300; batch++) {
    h.transaction(() => {
      for (let i = 0; i < 10; i++) insert.run(ROW);
    })();
    most = Math.max(most, walSize(file));
    await sleep(1);
  }
  assert.ok(most < 8 * RESTART_BYTES, `the WAL reached ${most} bytes`);
  assert.equal(h.prepare<[], { n: number }>('select count(*) as n from t').get()!.n, 3001);
  await database.close();
  assert.equal(fs.existsSync(`${file}-wal`), false, 'the WAL is removed on close');
  const again = await openDatabase<any>(`sqlite://${file}`, { checkpoint: false });
  assert.equal(sqliteHandleOf(again.db)!.prepare<[], { n: number }>('select count(*) as n from t').get()!.n, 3001);
  await again.close();
});

test('a process killed (SIGKILL) while its WAL is being checkpointed loses no committed transaction', async () => {
  const file = path.join(tempDir('checkpoint-crash-'), 'db.sqlite');
  const index = path.join(path.dirname(fileURLToPath(import.meta.url)), 'index.ts');
  // The child commits transactions of 10 rows as fast as it can, one per turn of its event loop, and prints
  // each one's last id once committed.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `
      const { openDatabase, sqliteHandleOf } = await import(${JSON.stringify(index)});
      const database = await openDatabase(${JSON.stringify(`sqlite://${file}`)}, { checkpoint: ${JSON.stringify(FAST)} });
      const h = sqliteHandleOf(database.db);
      h.exec('create table t (id integer primary key, v text not null)');
      const insert = h.prepare('insert into t (v) values (?)');
      const batch = h.transaction(() => { let id = 0; for (let i = 0; i < 10; i++) id = insert.run(${JSON.stringify(ROW)}).lastInsertRowid; return id; });
      for (;;) {
        process.stdout.write(batch() + '\\n');
        await new Promise((r) => setImmediate(r));
      }
      `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let committed = 0;
  // Past 40 restart sizes of WAL (10 MB), so the thread has copied and the WAL started over many times.
  for await (const line of readline.createInterface({ input: child.stdout! })) {
    committed = Number(line);
    if (committed >= 2500) break;
  }
  child.kill('SIGKILL');
  await exited;
  const database = await openDatabase<any>(`sqlite://${file}`, { checkpoint: false });
  const h = sqliteHandleOf(database.db)!;
  assert.equal(h.pragma('integrity_check', { simple: true }), 'ok');
  const { n, last } = h.prepare('select count(*) as n, max(id) as last from t').get() as { n: number; last: number };
  assert.ok(last >= committed, `committed up to ${committed}, found up to ${last}`);
  assert.equal(n, last, 'every row up to the last is there');
  await database.close();
});
