/**
 * Start-up and CLI (issue 24), `BENCH_ONLY=startup npm run bench`: whole-process wall times of the compiled
 * build (npm run build first), from spawn to exit, or for the server to both services answering /readyz.
 * Each round runs every case once, `node -e 0` among them, so a machine whose speed drifts moves them all;
 * the figures are medians over the rounds (BENCH_STARTUP_ROUNDS, default 10), with the ratio to the median of
 * `node -e 0`. The server starts on a fresh SQLite data directory each time (its migrations included).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BENCH_DIR } from './lib.js';
import { hashPassword } from '../src/kit/crypto/password.js';

const ROOT = path.resolve(BENCH_DIR, '..');
const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 10);
const PASSWORD = 'bench start-up password';
const NODE = [process.execPath, '--enable-source-maps'];

interface Case {
  name: string;
  /** Seconds this case may take, on a quiet machine (none: a reference). */
  target?: (hashSeconds: number) => number;
  targetText?: string;
  run(round: number, dataDir: string): Promise<number>;
}

/** Seconds from spawn to exit; a non-zero exit fails the bench. */
function timed(argv: string[], env: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve(seconds);
      else reject(new Error(`${argv.join(' ')} exited with ${code}: ${stderr.trim().split('\n').pop()}`));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function ready(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

/** Seconds from spawn until the account and the gateway both answer /readyz; then the process group is stopped. */
async function timedStart(argv: string[], dataDir: string): Promise<number> {
  const [account, gateway] = [await freePort(), await freePort()];
  const env = { DATA_DIR: dataDir, ACCOUNT_HOST: '127.0.0.1', ACCOUNT_PORT: String(account), GATEWAY_PORT: String(gateway), LOG_LEVEL: 'warn' };
  const started = performance.now();
  // Its own process group: npm start runs node under a shell, and all of them are stopped together.
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'ignore', detached: true });
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? -1));
  try {
    for (;;) {
      if (exited !== null) throw new Error(`${argv.join(' ')} exited with ${exited} before it was ready`);
      if ((await ready(`http://127.0.0.1:${account}/readyz`)) && (await ready(`http://127.0.0.1:${gateway}/readyz`))) break;
      if (performance.now() - started > 60_000) throw new Error(`${argv.join(' ')} was not ready after 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return (performance.now() - started) / 1000;
  } finally {
    if (exited === null) {
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await gone;
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const CASES: Case[] = [
  { name: 'node -e 0', run: () => timed([process.execPath, '-e', '0']) },
  { name: 'cli --help', target: () => 0.5, targetText: '≤ 0.5 s', run: () => timed([...NODE, 'scripts/run.mjs', 'cli', '--help']) },
  { name: 'npm run cli -- --help', target: () => 0.5, targetText: '≤ 0.5 s', run: () => timed(['npm', 'run', '-s', 'cli', '--', '--help']) },
  // The sources through tsx (npm run dev:cli; npm run cli before the compiled build): what tsx itself costs.
  { name: 'tsx src/cli.ts --help (sources)', run: () => timed([process.execPath, '--import', 'tsx', 'src/cli.ts', '--help']) },
  {
    name: 'cli user create',
    target: (hash) => 1 + hash,
    targetText: '≤ 1 s + hash',
    run: (round, dataDir) => timed([...NODE, 'scripts/run.mjs', 'cli', 'user', 'create', '--username', `bench${round}`, '--password', PASSWORD], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }),
  },
  {
    name: 'npm run cli -- user create',
    target: (hash) => 1 + hash,
    targetText: '≤ 1 s + hash',
    run: (round, dataDir) => timed(['npm', 'run', '-s', 'cli', '--', 'user', 'create', '--username', `npm${round}`, '--password', PASSWORD], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }),
  },
  { name: 'start to /readyz (SQLite)', target: () => 2, targetText: '≤ 2 s', run: (_r, dataDir) => timedStart([...NODE, 'scripts/run.mjs', 'main'], dataDir) },
  { name: 'npm start to /readyz (SQLite)', target: () => 2, targetText: '≤ 2 s', run: (_r, dataDir) => timedStart(['npm', 'start'], dataDir) },
];

export async function startupBench(): Promise<string[]> {
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}`);
  const lines = [`start-up and CLI: compiled build (${build.stdout.trim()}); ${ROUNDS} rounds, each case once a round, medians; wall seconds from spawn`];

  // One argon2id hash at the product's parameters, in this process: the allowance of `user create`.
  await hashPassword(PASSWORD);
  const hashes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await hashPassword(PASSWORD);
    hashes.push((performance.now() - t) / 1000);
  }
  const hash = median(hashes);

  const times = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-startup-'));
  try {
    const userDir = path.join(base, 'users');
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CASES) {
        // The server: a fresh data directory each time; the CLI: one shared by every user it creates.
        const dataDir = c.name.includes('readyz') ? path.join(base, `start-${CASES.indexOf(c)}-${round}`) : userDir;
        times.get(c.name)!.push(await c.run(round, dataDir));
      }
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }

  const floor = median(times.get('node -e 0')!);
  lines.push(`one argon2id hash (m=19456 KiB, t=2, p=1), in process: ${hash.toFixed(3)} s`);
  lines.push('');
  lines.push(`${'case'.padEnd(32)} ${'median s'.padStart(8)} ${'min–max s'.padStart(13)} ${'× node -e 0'.padStart(11)}  ${'target'.padEnd(13)} verdict`);
  for (const c of CASES) {
    const xs = times.get(c.name)!;
    const m = median(xs);
    const range = `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
    const goal = c.target?.(hash);
    const verdict = goal === undefined ? 'reference' : m <= goal ? 'MET' : 'MISSED';
    lines.push(`${c.name.padEnd(32)} ${m.toFixed(3).padStart(8)} ${range.padStart(13)} ${(m / floor).toFixed(1).padStart(11)}  ${(c.targetText ?? '').padEnd(13)} ${verdict}`);
  }
  return lines;
}
