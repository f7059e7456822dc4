/**
 * The chaos section of `npm run bench` (issue 25): BENCH_CHAOS_REQUESTS (2,000) chat completions, half of
 * them streamed, at LOAD.connections, through five fake upstreams (bench/chaos-fake.mjs: one healthy, four
 * drawing every answer from the chaos mix, seeded) — once through the gateway's relay (bench/chaos-gateway.ts:
 * five channels at one priority, breakers and backoff at their defaults) and once through Portkey's gateway
 * (bench/peers/portkey) with its fallback over the same five upstreams as targets and its retries:
 * `{strategy: {mode: "fallback"}, retry: {attempts: 2, on_status_codes: [408, 429, 500, 502, 503, 504]},
 * request_timeout, targets: [{provider: "openai", custom_host: …/uN/v1}, …]}`, the targets shuffled for
 * every call (the relay orders its channels at random too). Both give up on an upstream after the same
 * deadline without a first byte (BENCH_CHAOS_DEADLINE_MS, 1,000 ms). The fake's draws restart from the
 * same seed (BENCH_CHAOS_SEED, printed) before each run.
 *
 * A call succeeds when the caller gets the whole answer: a whole completion whose text is one upstream's
 * "Hello from uN.", or a stream of that text ending in `[DONE]` with no error event. Printed per system:
 * success rate, failures by kind, upstream requests per call (the fake's count), p50/p99 of the whole
 * answer's time, and the verdict on the issue's target (≥ 99.9 % success).
 *
 *   npx tsx bench/chaos.ts          prints the section alone (also `BENCH_ONLY=chaos npm run bench`)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { signWorkloadToken } from '../src/kit/crypto/workload-token.js';
import { BENCH_DIR, LOAD, startChild, type ServerChild, runWhenMain } from './lib.js';
import { ensurePortkeyInstalled } from './relay.js';

const PEER_DIR = path.join(BENCH_DIR, 'peers', 'portkey');
const REQUESTS = Number(process.env.BENCH_CHAOS_REQUESTS ?? 2000);
const CONNECTIONS = Number(process.env.BENCH_CHAOS_CONNECTIONS ?? LOAD.connections);
const DEADLINE_MS = Number(process.env.BENCH_CHAOS_DEADLINE_MS ?? 1000);
const SEED = Number(process.env.BENCH_CHAOS_SEED ?? crypto.randomInt(2 ** 31));
const TARGET = 0.999;
const UPSTREAMS = ['u1', 'u2', 'u3', 'u4', 'u5'];
const SECRET = crypto.randomBytes(32).toString('base64url');
const UPSTREAM_KEY = 'sk-bench-chaos-key';
const RETRY = { attempts: 2, on_status_codes: [408, 429, 500, 502, 503, 504] };

interface Run {
  name: string;
  ok: number;
  failures: Map<string, number>;
  upstream: Record<string, number>;
  latencies: number[];
  seconds: number;
}

const GOOD_TEXT = /^Hello from u\d\.$/;

/** Whether the caller got a whole answer; else why not, in a few words. */
function judge(stream: boolean, status: number, body: string): string | null {
  if (status !== 200) return `status ${status}`;
  if (!stream) {
    let j: any;
    try {
      j = JSON.parse(body);
    } catch {
      return body.trim() ? 'a body that is not JSON' : 'an empty body';
    }
    if (j?.error) return '200 with an error payload';
    return GOOD_TEXT.test(j?.choices?.[0]?.message?.content ?? '') ? null : 'a completion without the text';
  }
  const data = body
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim());
  let text = '';
  for (const d of data) {
    if (d === '[DONE]') continue;
    let j: any;
    try {
      j = JSON.parse(d);
    } catch {
      return 'a stream event that is not JSON';
    }
    if (j?.error) return text ? 'a stream ending in an error event after output' : 'a stream of only an error event';
    text += j?.choices?.[0]?.delta?.content ?? '';
  }
  if (data.at(-1) !== '[DONE]') return text ? 'a stream cut after output (no [DONE])' : 'a stream without output or [DONE]';
  if (!text) return 'an empty stream ([DONE] only)';
  return GOOD_TEXT.test(text) ? null : 'a stream without the whole text';
}

function bodyOf(stream: boolean): string {
  return JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 32, messages: [{ role: 'user', content: 'Say hello.' }], ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
}

async function post(url: string, body: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return res.json();
}

/** REQUESTS calls through one system at CONNECTIONS at once, every other one streamed. */
async function drive(name: string, url: string, headers: (i: number) => Record<string, string>, fake: string): Promise<Run> {
  await post(`${fake}/reset?seed=${SEED}`, '');
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: CONNECTIONS, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const run: Run = { name, ok: 0, failures: new Map(), upstream: {}, latencies: [], seconds: 0 };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const stream = i % 2 === 1;
        const t = performance.now();
        let why: string | null;
        try {
          const res = await pool.request({ path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers(i) }, body: bodyOf(stream) });
          why = judge(stream, res.statusCode, await res.body.text());
        } catch (e) {
          why = `a client error (${(e as Error).message})`;
        }
        run.latencies.push(performance.now() - t);
        if (why === null) run.ok++;
        else run.failures.set(why, (run.failures.get(why) ?? 0) + 1);
      }
    }),
  );
  run.seconds = (performance.now() - started) / 1000;
  await pool.close();
  run.upstream = (await (await fetch(`${fake}/stats`)).json()) as Record<string, number>;
  run.latencies.sort((a, b) => a - b);
  return run;
}

const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)]!;
const pct = (n: number) => `${(n * 100).toFixed(2)} %`;

function rows(runs: Run[]): string[] {
  const head = `${'system'.padEnd(34)} ${'success'.padStart(9)} ${'failed'.padStart(7)} ${'upstream/call'.padStart(14)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'wall s'.padStart(7)}`;
  const lines = [head];
  for (const r of runs) {
    const upstream = Object.values(r.upstream).reduce((a, b) => a + b, 0);
    lines.push(
      `${r.name.padEnd(34)} ${pct(r.ok / REQUESTS).padStart(9)} ${String(REQUESTS - r.ok).padStart(7)} ${(upstream / REQUESTS).toFixed(2).padStart(14)} ${at(r.latencies, 0.5).toFixed(1).padStart(8)} ${at(r.latencies, 0.99).toFixed(1).padStart(8)} ${r.seconds.toFixed(1).padStart(7)}`,
    );
  }
  for (const r of runs) {
    const failures = [...r.failures].sort((a, b) => b[1] - a[1]).map(([why, n]) => `${n} × ${why}`);
    lines.push(`  ${r.name}: upstream requests ${UPSTREAMS.map((u) => `${u} ${r.upstream[u] ?? 0}`).join(', ')} (u5 the healthy one); failures: ${failures.join('; ') || 'none'}`);
  }
  return lines;
}

/** A seeded shuffle of Portkey's targets, one order per call. */
function shuffler(seed: number) {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return <T>(xs: T[]): T[] => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
}

export async function chaosBench(): Promise<string[]> {
  ensurePortkeyInstalled();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-chaos-'));
  const children: ServerChild[] = [];
  const start = async (label: string, args: string[], env: Record<string, string> = {}) => {
    const child = await startChild(label, args, env);
    children.push(child);
    return child;
  };
  try {
    const fake = await start('chaos fake upstreams', [path.join(BENCH_DIR, 'chaos-fake.mjs')], { BENCH_CHAOS_SEED: String(SEED) });
    const gateway = await start('chaos gateway', ['--import', 'tsx', path.join(BENCH_DIR, 'chaos-gateway.ts')], { BENCH_DIR: dataDir, BENCH_UPSTREAM_URL: fake.url, BENCH_RELAY_SECRET: SECRET, BENCH_CHAOS_DEADLINE_MS: String(DEADLINE_MS) });
    const portkey = await start('Portkey peer', [path.join(PEER_DIR, 'server.mjs')], { PORTKEY_QUIET: '1' });
    const version = JSON.parse(fs.readFileSync(path.join(PEER_DIR, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')).version;

    // A workload token lives 60 s: a fresh one every 20 s.
    const mint = () => signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'edge', subject: 'bench', audience: 'gateway-relay' });
    let token = await mint();
    const refresh = setInterval(() => void mint().then((t) => (token = t)), 20_000);
    let relay: Run;
    try {
      relay = await drive('relay (breakers, defaults)', `${gateway.url}/relay/v1/chat/completions`, () => ({ authorization: `Bearer ${token}` }), fake.url);
    } finally {
      clearInterval(refresh);
    }

    const shuffle = shuffler(SEED);
    const targets = UPSTREAMS.map((u) => ({ provider: 'openai', api_key: UPSTREAM_KEY, custom_host: `${fake.url}/${u}/v1` }));
    const configs = Array.from({ length: REQUESTS }, () => JSON.stringify({ strategy: { mode: 'fallback' }, retry: RETRY, request_timeout: DEADLINE_MS, targets: shuffle(targets) }));
    const peer = await drive(`Portkey ${version} (fallback + retry)`, `${portkey.url}/v1/chat/completions`, (i) => ({ 'x-portkey-config': configs[i]! }), fake.url);

    const verdict = (r: Run) => `${r.name}: ${pct(r.ok / REQUESTS)} of calls answered whole; target ≥ ${pct(TARGET)}: ${r.ok / REQUESTS >= TARGET ? 'MET' : 'MISSED'}`;
    return [
      `chaos: ${REQUESTS.toLocaleString('en-US')} chat completions (every other one streamed) at ${CONNECTIONS} connections through five fake upstreams on loopback ` +
        `(bench/chaos-fake.mjs: u5 healthy; u1–u4 draw 30 % 5xx, 5 % 429 Retry-After 1 s, 5 % hangs, 5 % empty, 5 % HTTP 200 errors, 5 % cuts, else answer; seed ${SEED}, BENCH_CHAOS_SEED=${SEED} repeats it)`,
      `  relay: five channels at one priority, breaker and backoff defaults, GATEWAY_RETRY_TIMES 4, first-byte/idle deadline ${DEADLINE_MS} ms; ` +
        `Portkey ${version}: ${JSON.stringify({ strategy: { mode: 'fallback' }, retry: RETRY, request_timeout: DEADLINE_MS })} over the five upstreams as targets, shuffled per call`,
      '',
      ...rows([relay, peer]),
      '',
      verdict(relay),
      verdict(peer),
    ];
  } finally {
    for (const child of children.reverse()) await child.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, chaosBench);
