/**
 * The relay section of `npm run bench` (issue 20). One fake OpenAI-compatible upstream on loopback
 * (bench/relay-fake.mjs: a fixed completion, a fixed 50-chunk stream) behind three servers, each its own
 * process: a bare undici pass-through proxy (bench/relay-floor.mjs, the floor), the gateway's relay
 * (bench/relay-gateway.ts, SQLite, `POST /relay/v1/chat/completions` with a workload token minted per
 * slice) and Portkey's open-source gateway (bench/peers/portkey, installed on first use). The same client
 * (autocannon, LOAD.connections) measures them in alternating slices, non-streamed and streamed; then one
 * connection at a time, for the latency a request adds without queueing; then BENCH_RELAY_STREAMS (1,000)
 * paced streams are held open through the relay at once while the gateway's RSS is sampled.
 *
 *   npx tsx bench/relay.ts          prints the section alone (also `BENCH_ONLY=relay npm run bench`)
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { signWorkloadToken } from '../src/kit/crypto/workload-token.js';
import { alternate, BENCH_DIR, combine, HEADER, LOAD, measureFor, oneConnection, row, startChild, type Figures, type ServerChild, type Slice, runWhenMain } from './lib.js';
import { docsTable, judge, verdictLines, type Verdict } from './targets.js';

const PEER_DIR = path.join(BENCH_DIR, 'peers', 'portkey');
const ROUNDS = Number(process.env.BENCH_RELAY_ROUNDS ?? LOAD.rounds);
const STREAMS = Number(process.env.BENCH_RELAY_STREAMS ?? 1000);
const SECRET = crypto.randomBytes(32).toString('base64url');
const UPSTREAM_KEY = 'sk-bench-relay-key';

/** Installs the Portkey peer's own package from its lock file when its node_modules is missing. */
export function ensurePortkeyInstalled(): void {
  if (fs.existsSync(path.join(PEER_DIR, 'node_modules', '@portkey-ai', 'gateway', 'package.json'))) return;
  process.stderr.write('relay: installing bench/peers/portkey (npm ci, once)\n');
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A fresh workload token (60 s at most): one per slice, so none expires while it is used. */
const workloadToken = () => signWorkloadToken({ alg: 'HS256', secret: SECRET }, { issuer: 'edge', subject: 'bench', audience: 'gateway-relay' });

/** One of the three servers in front of the fake: where to POST and the headers of each slice. */
interface Proxy {
  name: string;
  url: string;
  pid: number | undefined;
  headers(): Promise<Record<string, string>>;
}

function bodyOf(model: string, stream: boolean): string {
  const messages = [{ role: 'user', content: 'Say hello.' }];
  return JSON.stringify({ model, messages, max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
}

const answered = (stream: boolean) => (status: number, body: string) => status === 200 && (stream ? body.includes('data: [DONE]') : body.includes('"chat.completion"'));

/** Saturated slices: autocannon at LOAD.connections, the server's CPU per request beside. */
function saturated(p: Proxy, stream: boolean): Slice {
  return async (seconds) =>
    measureFor({ name: `${p.name}, ${stream ? 'streamed' : 'whole'}`, url: p.url, method: 'POST', headers: await p.headers(), body: bodyOf('gpt-4o-mini', stream), check: answered(stream), pid: p.pid }, seconds);
}

/** One connection, one request after the other: each latency without a queue in front of it (fractional ms). */
function unloaded(p: Proxy, stream: boolean): Slice {
  return async (seconds) => oneConnection(`${p.name}, ${stream ? 'streamed' : 'whole'}, 1 conn.`, p.url, { headers: await p.headers(), body: bodyOf('gpt-4o-mini', stream), check: answered(stream) })(seconds);
}

/** Resident set size of a process in MB (Linux /proc). */
function rssMB(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** STREAMS paced streams (50 chunks, one every 100 ms) through the relay at once; the gateway's RSS sampled every 50 ms. */
async function holdStreams(relayUrl: string, pid: number): Promise<string[]> {
  const before = rssMB(pid);
  const pool = new Pool(new URL(relayUrl).origin, { connections: STREAMS });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${await workloadToken()}` };
  const body = bodyOf('bench-paced', true);
  let open = 0;
  let mostOpen = 0;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMB(pid))), 50);
  const started = performance.now();
  const one = async () => {
    const res = await pool.request({ path: '/relay/v1/chat/completions', method: 'POST', headers, body });
    mostOpen = Math.max(mostOpen, ++open);
    const text = await res.body.text();
    open--;
    return answered(true)(res.statusCode, text);
  };
  const results = await Promise.allSettled(Array.from({ length: STREAMS }, one));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await pool.close();
  const ok = results.filter((r) => r.status === 'fulfilled' && r.value).length;
  const growth = peak - before;
  return [
    `${STREAMS.toLocaleString('en-US')} concurrent streams through the relay (50 chunks, one every 100 ms, ~5 s each): ${ok} of ${STREAMS} complete with [DONE], ` +
      `at most ${mostOpen} open at once, all done in ${seconds.toFixed(1)} s`,
    `  gateway RSS ${before.toFixed(0)} MB before, ${peak.toFixed(0)} MB at peak, ${rssMB(pid).toFixed(0)} MB after: growth ${growth.toFixed(0)} MB; ` +
      `target < 200 MB: ${growth < 200 && ok === STREAMS ? 'MET' : 'MISSED'}`,
  ];
}

const column = (rounds: Figures[][], i: number) => combine(rounds.map((r) => r[i]!));

/** The figures of one shape (whole or streamed): rows of the three servers, saturated and one at a time, and the verdicts. */
async function shape(proxies: Proxy[], stream: boolean, lines: string[]): Promise<Verdict[]> {
  const kind = stream ? 'streamed' : 'whole';
  const full = await alternate(proxies.map((p) => saturated(p, stream)), ROUNDS, LOAD.sliceSeconds);
  const single = await alternate(proxies.map((p) => unloaded(p, stream)), ROUNDS, LOAD.sliceSeconds);
  const floor = column(full, 0).rps;
  const singleFloor = column(single, 0).rps;
  for (let i = 0; i < proxies.length; i++) lines.push(row(column(full, i), floor));
  for (let i = 0; i < proxies.length; i++) lines.push(row(column(single, i), singleFloor));
  if ([...full.flat(), ...single.flat()].some((f) => f.failed > 0)) lines.push('some requests failed (FAILED above): those figures are not valid');
  const addedP50 = (round: Figures[]) => round[1]!.p50 - round[0]!.p50;
  return [
    judge({ name: `${kind}: relay / floor req/s`, ratio: (r) => r[1]!.rps / r[0]!.rps, goal: 0.7, kind: 'min', rounds: full }),
    judge({ name: `${kind}: relay / Portkey req/s`, ratio: (r) => r[1]!.rps / r[2]!.rps, goal: 1.5, kind: 'min', rounds: full }),
    judge({ name: `${kind}: added p50 ms, ${LOAD.connections} conn.`, ratio: addedP50, goal: 1, kind: 'max', rounds: full }),
    judge({ name: `${kind}: added p50 ms, 1 conn.`, ratio: addedP50, goal: 1, kind: 'max', rounds: single }),
  ];
}

export async function relayBench(): Promise<string[]> {
  ensurePortkeyInstalled();
  const loadAverage = os.loadavg();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-relay-'));
  const children: ServerChild[] = [];
  const start = async (label: string, args: string[], env: Record<string, string> = {}) => {
    const child = await startChild(label, args, env);
    children.push(child);
    return child;
  };
  try {
    const fake = await start('relay fake upstream', [path.join(BENCH_DIR, 'relay-fake.mjs')]);
    const floor = await start('relay floor', [path.join(BENCH_DIR, 'relay-floor.mjs')], { BENCH_UPSTREAM_URL: fake.url });
    const gateway = await start('relay gateway', ['--import', 'tsx', path.join(BENCH_DIR, 'relay-gateway.ts')], { BENCH_DIR: dataDir, BENCH_UPSTREAM_URL: fake.url, BENCH_RELAY_SECRET: SECRET });
    const portkey = await start('Portkey peer', [path.join(PEER_DIR, 'server.mjs')]);
    const json = { 'content-type': 'application/json' };
    const proxies: Proxy[] = [
      { name: 'floor (undici proxy)', url: `${floor.url}/v1/chat/completions`, pid: floor.child.pid, headers: async () => ({ ...json, authorization: `Bearer ${UPSTREAM_KEY}` }) },
      { name: 'relay', url: `${gateway.url}/relay/v1/chat/completions`, pid: gateway.child.pid, headers: async () => ({ ...json, authorization: `Bearer ${await workloadToken()}` }) },
      {
        name: 'Portkey',
        url: `${portkey.url}/v1/chat/completions`,
        pid: portkey.child.pid,
        headers: async () => ({ ...json, authorization: `Bearer ${UPSTREAM_KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${fake.url}/v1` }),
      },
    ];
    const version = JSON.parse(fs.readFileSync(path.join(PEER_DIR, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')).version;
    const lines = [
      `relay: fake upstream on loopback (fixed completion; fixed stream of 50 chunks + usage + [DONE]); floor, relay and Portkey ${version} each in its own process; ` +
        `autocannon at ${LOAD.connections} connections, then 1 connection; ${ROUNDS} alternating ${LOAD.sliceSeconds} s slices after ${LOAD.warmupSeconds} s warm-up each`,
      '',
      HEADER.replace(' × bare', '× floor'),
    ];
    const verdicts = [...(await shape(proxies, false, lines)), ...(await shape(proxies, true, lines))];
    lines.push('', ...verdictLines(verdicts), '', 'for docs/performance.md (relay):', ...docsTable(verdicts, loadAverage), '');
    lines.push(...(await holdStreams(proxies[1]!.url, gateway.child.pid!)));
    return lines;
  } finally {
    for (const child of children.reverse()) await child.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, relayBench);
