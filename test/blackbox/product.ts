import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../hardening/service-process.js';
import { tempDir } from '../helpers/services.js';

/**
 * The product as an operator runs it, seen only from outside: `npm start` (scripts/run.mjs main, the compiled
 * dist/) as child processes on fresh DATA_DIRs and free loopback ports, and the operator CLI (`npm run cli`,
 * scripts/run.mjs cli) for what only the CLI does. Nothing of src/ is imported.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * `co-hosted`: one process with account, gateway and edge (SERVICES=account,gateway,edge). `apart`: the account
 * service alone, and the gateway with the edge in a second process; the account reaches the edge's customer
 * API over HTTP with a workload token.
 */
export type Mode = 'co-hosted' | 'apart';

/** The variables of the account ↔ edge HTTP transport (docs/configuration.md). */
const ACCOUNT_TO_EDGE_SECRET = 'blackbox-account-edge-secret-0123456789abcdef';
export function apartEnv(edgeUrl: string) {
  return {
    account: { ACCOUNT_EDGE_URL: edgeUrl, ACCOUNT_EDGE_TOKEN_KEY: ACCOUNT_TO_EDGE_SECRET },
    edge: { EDGE_CUSTOMER_TOKEN_SECRET: ACCOUNT_TO_EDGE_SECRET },
  };
}

export const SESSION_SECRET = 'blackbox-session-secret-0123456789abcdef0123';

/** What every process of the product is started with: production mode, the documented switches a test needs. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The test runner's own variables (NODE_ENV=test, API_SAMPLES, TEST_*) are not the product's.
    if (v === undefined || k === 'NODE_ENV' || k.startsWith('TEST_') || k === 'API_SAMPLES' || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return {
    ...env,
    NODE_ENV: 'production',
    // Required in production, by every process (the CLI's included).
    SESSION_SECRET,
    // Generous, not off: the limiter stays in the path of every request (concurrent top-ups go through it).
    CRITICAL_RATE_LIMIT: '100000',
    PUBLIC_ADMISSION_MODE: 'controlled',
    // The fake upstream is on loopback, which the README says needs allowing.
    GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
  };
}

/**
 * dist/ built once before any process uses it: scripts/run.mjs rebuilds a stale build by removing dist/ and
 * moving a new one in, which would pull it from under a server another test file started meanwhile.
 */
async function ensureBuilt(): Promise<void> {
  const lock = path.join(ROOT, '.tmp', 'blackbox-build.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const end = Date.now() + 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // A lock older than a minute is left over from a killed run.
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 60_000) fs.rmSync(lock, { recursive: true, force: true });
      } catch {}
      if (Date.now() > end) throw new Error('the dist/ build lock was not released');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    const r = await run(process.execPath, ['-e', "const b = await import('./scripts/build.mjs'); if (b.buildIsStale()) await b.buildServer();"], baseEnv(), 90_000, ['--input-type=module']);
    if (r.status !== 0) throw new Error(`the build failed: ${r.stderr}`);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function run(cmd: string, args: string[], env: Record<string, string>, timeout = 60_000, nodeFlags: string[] = []) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd, [...nodeFlags, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'], timeout });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.stdin.end();
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface ServerProcess {
  name: string;
  env: Record<string, string>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM and wait for the exit (SIGKILL after 15 s); answers the exit code. */
  stop(): Promise<number | null>;
}

async function startServer(name: string, env: Record<string, string>, readyUrls: string[]): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--enable-source-maps', 'scripts/run.mjs', 'main'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const server: ServerProcess = {
    name,
    env,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const end = Date.now() + 60_000;
  for (const url of readyUrls) {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} exited at start-up (${child.exitCode}):\n${out}`);
      if (Date.now() > end) {
        await server.stop();
        throw new Error(`${name} was not ready within 60 s:\n${out}`);
      }
      const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return server;
}

export interface Processes {
  mode: Mode;
  accountUrl: string;
  gatewayUrl: string;
  edgeUrl: string;
  servers: ServerProcess[];
  /** Runs an operator CLI command on the account's (`account`) or the gateway and edge's (`gateway`) data. */
  cli(on: 'account' | 'gateway', args: string[], env?: Record<string, string>): Promise<string>;
  /** The environment each side's CLI runs with. */
  envOf: Record<'account' | 'gateway', Record<string, string>>;
  /** Every line the servers wrote. */
  output(): string;
  stop(): Promise<void>;
}

type Cli = Processes['cli'];

/**
 * Starts the product in `mode` on fresh data directories; resolves once every listener is ready and
 * `meanwhile` (CLI commands an operator runs while the server starts) is done.
 */
export async function startProcesses<T>(mode: Mode, meanwhile: (cli: Cli) => Promise<T>): Promise<{ processes: Processes; result: T }> {
  await ensureBuilt();
  const ports = { account: await freePort(), gateway: await freePort(), edge: await freePort() };
  const urls = { account: `http://127.0.0.1:${ports.account}`, gateway: `http://127.0.0.1:${ports.gateway}`, edge: `http://127.0.0.1:${ports.edge}` };
  const listeners = {
    ACCOUNT_HOST: '127.0.0.1',
    ACCOUNT_PORT: String(ports.account),
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(ports.gateway),
    EDGE_HOST: '127.0.0.1',
    EDGE_PORT: String(ports.edge),
  };
  const dirs: string[] = [];
  const envOf: Record<'account' | 'gateway', Record<string, string>> = { account: {}, gateway: {} };
  const starting: [string, Record<string, string>, string[]][] = [];
  if (mode === 'co-hosted') {
    const dataDir = tempDir('blackbox-');
    dirs.push(dataDir);
    const env = { ...baseEnv(), ...listeners, DATA_DIR: dataDir, SERVICES: 'account,gateway,edge' };
    envOf.account = envOf.gateway = env;
    starting.push(['account+gateway+edge', env, [urls.account, urls.gateway, urls.edge]]);
  } else {
    const accountDir = tempDir('blackbox-account-');
    const edgeDir = tempDir('blackbox-edge-');
    dirs.push(accountDir, edgeDir);
    const transport = apartEnv(urls.edge);
    envOf.gateway = { ...baseEnv(), ...listeners, ...transport.edge, DATA_DIR: edgeDir, SERVICES: 'gateway,edge' };
    envOf.account = { ...baseEnv(), ...listeners, ...transport.account, DATA_DIR: accountDir, SERVICES: 'account' };
    starting.push(['gateway+edge', envOf.gateway, [urls.gateway, urls.edge]], ['account', envOf.account, [urls.account]]);
  }
  const cli: Cli = async (on, args, env = {}) => {
    const r = await run(process.execPath, ['--enable-source-maps', 'scripts/run.mjs', 'cli', ...args], { ...envOf[on], ...env }, 60_000);
    if (r.status !== 0) throw new Error(`cli ${args.slice(0, 2).join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const servers: ServerProcess[] = [];
  const stop = async () => {
    for (const s of servers) await s.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  };
  const settled = await Promise.allSettled([meanwhile(cli), ...starting.map(([name, env, ready]) => startServer(name, env, ready))]);
  for (const s of settled.slice(1)) if (s.status === 'fulfilled') servers.push(s.value as ServerProcess);
  const failed = settled.find((s) => s.status === 'rejected') as PromiseRejectedResult | undefined;
  if (failed) {
    await stop();
    throw failed.reason;
  }
  return {
    result: (settled[0] as PromiseFulfilledResult<T>).value,
    processes: {
      mode,
      accountUrl: urls.account,
      gatewayUrl: urls.gateway,
      edgeUrl: urls.edge,
      servers,
      cli,
      envOf,
      output: () => servers.map((s) => s.output()).join('\n'),
      stop,
    },
  };
}
