/**
 * Shared pieces of `npm run bench`: server child processes, one autocannon measurement, and the table
 * row format. bench/gateway.ts may import these to print rows in the same shape.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool } from 'undici';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Fixed load shape for every HTTP case, so the ratios compare like with like. */
export const LOAD = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  /** Cases compared by a ratio are measured in alternating slices of this length... */
  sliceSeconds: Number(process.env.BENCH_SLICE_SECONDS ?? 2),
  /** ...this many rounds (reads), */
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  /** ...and this many for logins, whose rate moves more from one slice to the next. */
  loginRounds: Number(process.env.BENCH_LOGIN_ROUNDS ?? 5),
};

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  /** Responses that were not the expected success (non-2xx, or success:false where checked). */
  failed: number;
  total: number;
  /** Share of all CPU time the hypervisor stole during the measurement (stealMeter), where known. */
  steal?: number;
  /** Server CPU per request in µs (all threads, and its main thread), when the case named the server's pid. */
  cpu?: { all: number; main: number };
}

/** An autocannon request whose hooks are functions (not worker file paths). */
export type BenchRequest = Omit<autocannon.Request, 'setupRequest' | 'onResponse'> & {
  setupRequest?: (request: autocannon.Request, context: object) => autocannon.Request;
  onResponse?: (status: number, body: string, context: object, headers: Record<string, unknown>) => void;
};

export interface CannonCase {
  name: string;
  url: string;
  connections?: number;
  requests?: BenchRequest[];
  method?: autocannon.Request['method'];
  headers?: Record<string, string>;
  body?: string;
  /** Called for every response; return false to count it as failed. */
  check?: (status: number, body: string) => boolean;
  /** The server's process id: its CPU time (from /proc) is divided by the requests served. */
  pid?: number;
}

function cannon(c: CannonCase, seconds: number, onFailure: () => void): Promise<autocannon.Result> {
  const requests = (c.requests ?? [{}]).map(
    (r): autocannon.Request => ({
      ...r,
      onResponse: (status, body, context, headers) => {
        if (c.check ? !c.check(status, body) : status >= 300) onFailure();
        r.onResponse?.(status, body, context, (headers ?? {}) as Record<string, unknown>);
      },
    }),
  );
  return autocannon({
    url: c.url,
    connections: c.connections ?? LOAD.connections,
    pipelining: 1,
    duration: seconds,
    ...(c.method ? { method: c.method } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
    ...(c.body !== undefined ? { body: c.body } : {}),
    requests,
  });
}

/** Warms the path up (discarded), then measures it for LOAD.seconds. */
export async function measure(c: CannonCase): Promise<Figures> {
  if (LOAD.warmupSeconds > 0) await cannon(c, LOAD.warmupSeconds, () => {});
  return measureFor(c, LOAD.seconds);
}

/** One measurement of `seconds`, without warm-up. */
export async function measureFor(c: CannonCase, seconds: number): Promise<Figures> {
  let failed = 0;
  const steal = stealMeter();
  const cpu = c.pid ? cpuMeter(c.pid) : undefined;
  const r = await cannon(c, seconds, () => failed++);
  const total = r.requests.total;
  return {
    name: c.name,
    rps: total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    failed: failed + r.errors + r.timeouts,
    total,
    steal: steal(),
    cpu: cpu?.(total),
  };
}

/** CPU time in µs from a /proc stat file (utime + stime, in clock ticks of 10 ms). */
function cpuMicros(statFile: string): number {
  const fields = fs.readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/**
 * Starts a meter of a process's CPU time (Linux /proc; all threads and the main thread); the returned
 * function divides the time used since then by `requests` (undefined off Linux or when none were served).
 */
export function cpuMeter(pid: number): (requests: number) => { all: number; main: number } | undefined {
  const read = (): [number, number] | undefined => {
    try {
      return [cpuMicros(`/proc/${pid}/stat`), cpuMicros(`/proc/${pid}/task/${pid}/stat`)];
    } catch {
      return undefined;
    }
  };
  const start = read();
  return (requests) => {
    const end = read();
    if (!start || !end || requests === 0) return undefined;
    return { all: (end[0] - start[0]) / requests, main: (end[1] - start[1]) / requests };
  };
}

/** One timed measurement of a case, of the given length (a CannonCase's measureFor, or an in-process loop). */
export type Slice = (seconds: number) => Promise<Figures>;

/**
 * Measures the slices in turn for `rounds` rounds of `seconds` each, after one discarded warm-up of each,
 * so a machine that drifts during the run weighs on all of them alike. Returns [round][slice].
 */
export async function alternate(slices: Slice[], rounds: number, seconds: number): Promise<Figures[][]> {
  if (LOAD.warmupSeconds > 0) for (const slice of slices) await slice(LOAD.warmupSeconds);
  const out: Figures[][] = [];
  for (let i = 0; i < rounds; i++) {
    const round: Figures[] = [];
    for (const slice of slices) round.push(await slice(seconds));
    out.push(round);
  }
  return out;
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Joins measurements of equal length of one case: overall req/s, the median p50, the worst p99. */
export function combine(parts: Figures[]): Figures {
  const p50s = parts.map((f) => f.p50).sort((a, b) => a - b);
  return {
    name: parts[0]!.name,
    rps: parts.reduce((n, f) => n + f.rps, 0) / parts.length,
    p50: p50s[Math.floor(p50s.length / 2)]!,
    p99: Math.max(...parts.map((f) => f.p99)),
    failed: parts.reduce((n, f) => n + f.failed, 0),
    total: parts.reduce((n, f) => n + f.total, 0),
    steal: parts.every((f) => f.steal !== undefined) ? mean(parts.map((f) => f.steal!)) : undefined,
    cpu: parts.every((f) => f.cpu) ? { all: mean(parts.map((f) => f.cpu!.all)), main: mean(parts.map((f) => f.cpu!.main)) } : undefined,
  };
}

/** The cpu line of /proc/stat: [steal, all] ticks since boot (undefined off Linux). */
function cpuTicks(): [number, number] | undefined {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    return [fields[7] ?? 0, fields.reduce((a, b) => a + b, 0)];
  } catch {
    return undefined;
  }
}

/**
 * Starts a meter of the CPU time the hypervisor gave to other guests ("steal") on this virtual machine;
 * the returned function reads its share of all CPU time since then (undefined off Linux). A window in
 * which the host steals a noticeable share says more about the host than about the code measured.
 */
export function stealMeter(): () => number | undefined {
  const start = cpuTicks();
  return () => {
    const end = cpuTicks();
    if (!start || !end || end[1] === start[1]) return undefined;
    return (end[0] - start[0]) / (end[1] - start[1]);
  };
}

/** "host steal 12 %", or nothing when unknown. */
export function stealNote(share: number | undefined): string {
  return share === undefined ? '' : `host steal ${(share * 100).toFixed(0)} %`;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export const HEADER = `${'case'.padEnd(44)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'× bare'.padStart(7)}  notes`;

/**
 * One table row; `baseline` is the bare Fastify req/s of this run (none: "—"). Server CPU per request,
 * where measured, and the host's steal end the notes.
 */
export function row(f: Figures, baseline: number | undefined, notes = ''): string {
  const extra = f.failed ? `${f.failed}/${f.total} FAILED ` : '';
  const tail = [notes, f.cpu ? `server CPU ${f.cpu.all.toFixed(1)} µs/req` : '', stealNote(f.steal)].filter(Boolean).join('; ');
  const ratio = baseline ? (f.rps / baseline).toFixed(3) : '—';
  return `${f.name.padEnd(44)} ${fmt(f.rps).padStart(9)} ${fmt(f.p50, 1).padStart(7)} ${fmt(f.p99, 1).padStart(7)} ${ratio.padStart(7)}  ${extra}${tail}`;
}

export interface ServerChild {
  url: string;
  child: ChildProcess;
  /** Everything the server reported over IPC when it was ready (at least its url). */
  ready: Record<string, unknown>;
  stop(): Promise<void>;
}

/**
 * Starts bench/server.ts in its own Node process (the load generator keeps the other core) and waits
 * for it to report its URL over IPC. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server.
 */
export function startServer(kind: string, env: Record<string, string> = {}): Promise<ServerChild> {
  return startChild(`bench server "${kind}"`, ['--import', 'tsx', path.join(BENCH_DIR, 'server.ts'), kind], env);
}

/** Starts `node <args>` with an IPC channel and waits for its {url} (or {error}) message. */
export function startChild(label: string, args: string[], env: Record<string, string>): Promise<ServerChild> {
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, ...args], {
    env: { ...process.env, ...env },
    // The server's request log goes to /dev/null: written as in production, but not read back here.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`${label} ${why}`));
    child.once('exit', (code) => fail(`exited early with code ${code}`));
    child.once('error', (e) => fail(e.message));
    child.once('message', (m: { url?: string; error?: string }) => {
      if (!m.url) return fail(m.error ?? 'failed');
      child.removeAllListeners('exit');
      resolve({
        url: m.url,
        child,
        ready: m,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.send('stop');
          }),
      });
    });
  });
}

/**
 * Drops the bench's own PostgreSQL schema, named by the URL's required ?schema= (`name` is the variable the
 * URL came from, for the error), so every run starts from empty tables and leaves nothing behind.
 */
export async function dropSchema(url: string, name: string) {
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  if (!schema || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`${name} needs ?schema=NAME (a schema of its own, dropped before and after the run)`);
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/** Runs a bench section and prints its lines when its file is the one started (`tsx bench/relay.ts`). */
export function runWhenMain(moduleUrl: string, bench: () => Promise<string[]>) {
  if (process.argv[1] !== fileURLToPath(moduleUrl)) return;
  bench().then(
    (lines) => {
      console.log(lines.join('\n'));
      process.exit();
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}

/** One connection, one request after the other (an undici Pool): each latency without a queue in front of it, to the µs. */
export function oneConnection(name: string, url: string, request: { headers: Record<string, string>; body: string; check: (status: number, text: string) => boolean }): Slice {
  return async (seconds) => {
    const u = new URL(url);
    const pool = new Pool(u.origin, { connections: 1 });
    const latencies: number[] = [];
    let failed = 0;
    const steal = stealMeter();
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const res = await pool.request({ path: u.pathname, method: 'POST', headers: request.headers, body: request.body });
        if (!request.check(res.statusCode, await res.body.text())) failed++;
      } catch {
        failed++;
      }
      latencies.push(performance.now() - t);
    }
    await pool.close();
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!;
    return { name, rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failed, total: latencies.length, steal: steal() };
  };
}
