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

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Fixed load shape for every HTTP case, so the ratios compare like with like. */
export const LOAD = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 50),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
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
  const r = await cannon(c, seconds, () => failed++);
  const total = r.requests.total;
  return { name: c.name, rps: total / r.duration, p50: r.latency.p50, p99: r.latency.p99, failed: failed + r.errors + r.timeouts, total, steal: steal() };
}

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
    steal: parts.every((f) => f.steal !== undefined) ? parts.reduce((n, f) => n + f.steal!, 0) / parts.length : undefined,
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

/** One table row; `baseline` is the bare Fastify req/s of this run. The host's steal ends the notes. */
export function row(f: Figures, baseline: number, notes = ''): string {
  const extra = f.failed ? `${f.failed}/${f.total} FAILED ` : '';
  const steal = stealNote(f.steal);
  return `${f.name.padEnd(44)} ${fmt(f.rps).padStart(9)} ${fmt(f.p50, 1).padStart(7)} ${fmt(f.p99, 1).padStart(7)} ${(f.rps / baseline).toFixed(3).padStart(7)}  ${extra}${notes}${notes && steal ? '; ' : ''}${steal}`;
}

export interface ServerChild {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts bench/server.ts in its own Node process (the load generator keeps the other core) and waits
 * for it to report its URL over IPC. BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server.
 */
export function startServer(kind: string, env: Record<string, string> = {}): Promise<ServerChild> {
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(BENCH_DIR, 'server.ts'), kind], {
    env: { ...process.env, ...env },
    // The server's request log goes to /dev/null: written as in production, but not read back here.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`bench server "${kind}" ${why}`));
    child.once('exit', (code) => fail(`exited early with code ${code}`));
    child.once('error', (e) => fail(e.message));
    child.once('message', (m: { url?: string; error?: string }) => {
      if (!m.url) return fail(m.error ?? 'failed');
      child.removeAllListeners('exit');
      resolve({
        url: m.url,
        child,
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
