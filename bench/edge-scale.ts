/**
 * The PostgreSQL chat part of the edge bench (bench/edge.ts, issue 33). One edge database on PostgreSQL (the
 * schema bench_edge_e2e, made by bench/edge-db.ts: `gpt-4o-mini` reserving 100, BENCH_EDGE_WALLETS owners each
 * with a key and a credited wallet), shared by two edge instances, each its own process co-hosting a gateway
 * (bench/edge-server.ts e2e with EDGE_DATABASE_URL; each gateway on SQLite of its own with a channel to the
 * same fake upstream). The client takes the next of the 1,000 keys for every request.
 *   1. instance A against the bare proxy, whole answers, in alternating slices: edge ≥ 0.25 × the proxy;
 *   2. instance A alone (LOAD.connections) against A and B together (half the connections each, at once), in
 *      alternating slices: the throughput of one and of two instances;
 *   3. once every run is final, every wallet against the runs settled on it (bench/edge-db.ts checkLedger),
 *      and the answers the clients got against the runs that succeeded: no lost and no double charge.
 */
import fs from 'node:fs';
import path from 'node:path';
import { alternate, LOAD, type Figures, type Slice } from './lib.js';
import { judge, rateRatio, type Verdict } from './targets.js';
import { checkLedger, prepareDatabase, WALLETS } from './edge-db.js';
import { children, column, cpuLine, edgeArgs, fakeArgs, floorArgs, floorProxy, PROCESS_WARMUP, ROUNDS, rows, saturated, type Proxy } from './edge-chat.js';

const JSON_TYPE = { 'content-type': 'application/json' };

/** Both instances at once, half the connections each: one figure (req/s summed, CPU per call over both). */
function together(a: Proxy, b: Proxy): Slice {
  const half = Math.max(1, Math.floor(LOAD.connections / 2));
  return async (seconds) => {
    const [x, y] = await Promise.all([saturated(a, false, half)(seconds), saturated(b, false, LOAD.connections - half)(seconds)]);
    const total = x.total + y.total;
    const cpu = x.cpu && y.cpu && total ? { all: (x.cpu.all * x.total + y.cpu.all * y.total) / total, main: (x.cpu.main * x.total + y.cpu.main * y.total) / total } : undefined;
    const steal = x.steal !== undefined && y.steal !== undefined ? (x.steal + y.steal) / 2 : undefined;
    const figures: Figures = { name: 'edge A + B, 2 instances, whole', rps: x.rps + y.rps, p50: Math.max(x.p50, y.p50), p99: Math.max(x.p99, y.p99), failed: x.failed + y.failed, total, steal, cpu };
    return figures;
  };
}

export async function postgresPart(url: string, dataDir: string, lines: string[]): Promise<Verdict[]> {
  const keys = await prepareDatabase(url, 'gpt-4o-mini', 100);
  const procs = children();
  const answered = { count: 0 };
  try {
    const fake = await procs.start('relay fake upstream', fakeArgs);
    const floor = await procs.start('relay floor', floorArgs, { BENCH_UPSTREAM_URL: fake.url });
    const instance = async (name: string) => {
      fs.mkdirSync(path.join(dataDir, name), { recursive: true });
      const s = await procs.start(`edge ${name} (PostgreSQL)`, edgeArgs, { BENCH_EDGE_MODE: 'e2e', BENCH_DIR: path.join(dataDir, name), BENCH_UPSTREAM_URL: fake.url, EDGE_DATABASE_URL: url });
      const p: Proxy = { name: `edge ${name} + relay, PostgreSQL, ${WALLETS.toLocaleString('en-US')} wallets`, url: `${s.url}/v1/chat/completions`, pid: s.child.pid, headers: JSON_TYPE, keys, answered };
      if (PROCESS_WARMUP > 0) await saturated(p, false)(PROCESS_WARMUP);
      return p;
    };
    const a = await instance('A');
    const proxy = floorProxy(floor);
    if (PROCESS_WARMUP > 0) await saturated(proxy, false)(PROCESS_WARMUP);
    const versus = await alternate([proxy, a].map((p) => saturated(p, false)), ROUNDS, LOAD.sliceSeconds);
    rows(versus, lines);
    lines.push(cpuLine(versus));
    const b = await instance('B');
    const scale = await alternate([saturated({ ...a, name: 'edge A alone, 1 instance' }, false), together(a, b)], ROUNDS, LOAD.sliceSeconds);
    rows(scale, lines);
    const [one, two] = [column(scale, 0).rps, column(scale, 1).rps];
    lines.push(`  throughput on one PostgreSQL: 1 instance ${one.toFixed(0)} req/s, 2 instances ${two.toFixed(0)} req/s (${(two / one).toFixed(2)} ×; every process on the same 2 vCPUs)`);
    // Checked with the instances still up: a call the client gave up on at the end of a slice still settles.
    const ledger = await checkLedger(url);
    const lost = Math.max(0, answered.count - ledger.succeeded);
    lines.push(
      `  ledger after the load: ${ledger.runs.toLocaleString('en-US')} runs (${ledger.succeeded.toLocaleString('en-US')} succeeded, ${ledger.open} still open), ` +
        `${ledger.settlements.toLocaleString('en-US')} settlements charging ${ledger.charged.toLocaleString('en-US')} units; the clients got ${answered.count.toLocaleString('en-US')} answers; ` +
        `${ledger.wrong} of the wallets off their settled runs${ledger.reasons.length ? ` (${ledger.reasons.join('; ')})` : ''}`,
    );
    const problems = ledger.wrong + ledger.open + lost;
    const check: Verdict = { name: `chat, PostgreSQL, 2 instances: wallets off their runs + open runs + unbilled answers`, ratios: [problems], mean: problems, goal: '≤ 0', met: problems === 0 && ledger.settlements > 0 };
    return [judge({ name: `chat, PostgreSQL, ${WALLETS.toLocaleString('en-US')} wallets: edge / bare proxy req/s`, ratio: rateRatio(1, 0), goal: 0.25, kind: 'min', rounds: versus }), check];
  } finally {
    await procs.stop();
  }
}
