// What a SQLite commit costs the thread that commits, with the WAL checkpointed in that thread (SQLite's
// automatic checkpoint) or by kit/db's checkpoint thread: batches shaped like the edge ledger's (10 pieces:
// reservations and settlements, each a wallet update, a run row and two or three events), one batch per turn
// of the event loop with the thread's other work in between (a busy loop of WORK µs: the calls' own CPU
// outside the ledger), the two modes in alternating rounds on fresh files.
//   npx tsx bench/sqlite-commit.ts [batches per round, default 3000] [rounds, default 3] [WORK µs, default 3000]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, sqliteHandleOf } from '../src/kit/db/index.js';

const BATCHES = Number(process.argv[2] ?? 3000);
const ROUNDS = Number(process.argv[3] ?? 3);
const WORK_MS = Number(process.argv[4] ?? 3000) / 1000;
const SCHEMA = `
create table wallets (owner_id integer primary key, balance integer not null, reserved integer not null);
create table runs (run_id text primary key, owner_id integer not null, status text not null, created_at integer not null, amount integer not null, cost integer not null);
create index runs_owner on runs (owner_id, created_at);
create index runs_status on runs (status, created_at);
create table events (seq integer primary key autoincrement, run_id text not null, type text not null, payload text not null, created_at integer not null);
create index events_run on events (run_id);
insert into wallets values (1, 1000000000000, 0);`;
const PAYLOAD = JSON.stringify({ runId: crypto.randomUUID(), ownerId: 1, model: 'gpt-4o-mini', usage: { prompt: 12, completion: 34 }, note: 'x'.repeat(240) });

/** CPU time of this thread (the main one: its task id is the process id), from /proc, in µs. */
function mainThreadCpuUs(): number {
  const fields = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

async function round(mode: 'inline' | 'thread') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sqlite-commit-'));
  const database = await openDatabase<any>(`sqlite://${dir}/db.sqlite`, { checkpoint: mode === 'thread' ? {} : false });
  const h = sqliteHandleOf(database.db)!;
  h.exec(SCHEMA);
  const reserve = h.prepare('update wallets set reserved = reserved + ? where owner_id = 1 and balance - reserved >= ?');
  const insertRun = h.prepare('insert into runs values (?, 1, ?, ?, ?, 0)');
  const event = h.prepare('insert into events (run_id, type, payload, created_at) values (?, ?, ?, ?)');
  const finish = h.prepare("update runs set status = 'succeeded', cost = ? where run_id = ?");
  const open: string[] = [];
  const lat: number[] = [];
  let maxWal = 0;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuUs();
  const t0 = performance.now();
  for (let b = 0; b < BATCHES; b++) {
    const s = performance.now();
    h.exec('begin');
    for (let i = 0; i < 10; i++) {
      const now = Date.now();
      if (i % 2 === 0) {
        const id = crypto.randomUUID();
        reserve.run(100, 100);
        insertRun.run(id, 'running', now, 100);
        event.run(id, 'run.created', PAYLOAD, now);
        event.run(id, 'wallet.reserved', PAYLOAD, now);
        open.push(id);
      } else {
        const id = open.shift()!;
        finish.run(7, id);
        reserve.run(-100, -100);
        for (const type of ['run.succeeded', 'wallet.charged', 'wallet.released']) event.run(id, type, PAYLOAD, now);
      }
    }
    h.exec('commit');
    lat.push(performance.now() - s);
    if (b % 100 === 0) maxWal = Math.max(maxWal, fs.statSync(`${dir}/db.sqlite-wal`).size);
    await new Promise((r) => setImmediate(r));
    const until = performance.now() + WORK_MS;
    while (performance.now() < until);
  }
  const wall = performance.now() - t0 - BATCHES * WORK_MS;
  const cpu = process.cpuUsage(cpu0);
  const main = mainThreadCpuUs() - main0;
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
  lat.sort((a, b) => a - b);
  const q = (p: number) => (lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! * 1000).toFixed(0);
  console.log(
    `${mode.padEnd(6)} ${BATCHES} batches: ${((wall * 1000) / BATCHES).toFixed(0)} µs of the thread per batch; CPU per batch ${(main / BATCHES - WORK_MS * 1000).toFixed(0)} µs in the thread, ${((cpu.user + cpu.system - main) / BATCHES).toFixed(0)} µs in others; ` +
      `batch p50 ${q(0.5)} p99 ${q(0.99)} p99.9 ${q(0.999)} max ${q(1)} µs, WAL at most ${(maxWal / 2 ** 20).toFixed(1)} MiB`,
  );
}

for (let r = 0; r < ROUNDS; r++) {
  await round('inline');
  await round('thread');
}
