/**
 * The chat part of the edge bench (bench/edge.ts, issue 33): `POST /v1/chat/completions` on the edge co-hosted
 * with the gateway (bench/edge-server.ts e2e, SQLite), whose channel points at the relay bench's fake upstream
 * (bench/relay-fake.mjs), against the relay bench's bare undici proxy (bench/relay-floor.mjs) and Portkey's
 * gateway (bench/peers/portkey) in front of the same fake. Whole answers (the three servers), then streamed
 * ones (50 chunks; the proxy and the edge), each in alternating slices at LOAD.connections; then, in a process
 * of its own, what the kit's Fastify request cycle costs a call (bench/edge-fastify.ts); with the part
 * `latency`, one connection at a time (the added p50 of issue 21).
 */
import fs from 'node:fs';
import path from 'node:path';
import { alternate, BENCH_DIR, combine, LOAD, measureFor, oneConnection, row, startChild, type BenchRequest, type Figures, type ServerChild, type Slice } from './lib.js';
import { ensurePortkeyInstalled } from './relay.js';
import { cpuRatio, judge, rateRatio, type Verdict } from './targets.js';

export const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? LOAD.rounds);
/**
 * Load on a freshly started server before anything is measured (discarded), beyond alternate()'s warm-up: the
 * edge's first seconds (tsx, Kysely and Fastify code not yet optimised) otherwise cost its first case ~1.5 × the
 * CPU per request of the later ones.
 */
export const PROCESS_WARMUP = Number(process.env.BENCH_EDGE_PROCESS_WARMUP_SECONDS ?? 5);
export const UPSTREAM_KEY = 'sk-bench-relay-key';
const PORTKEY_DIR = path.join(BENCH_DIR, 'peers', 'portkey');
const JSON_TYPE = { 'content-type': 'application/json' };

export const column = (rounds: Figures[][], i: number) => combine(rounds.map((r) => r[i]!));
const p99Ratio = (a: number, b: number) => (round: Figures[]) => round[a]!.p99 / round[b]!.p99;

/** One server in front of the fake: where to POST the chat completion, with which headers, and (rotating) keys. */
export interface Proxy {
  name: string;
  url: string;
  pid: number | undefined;
  headers: Record<string, string>;
  /** Bearer keys taken in turn, one per request (instead of the authorization in `headers`). */
  keys?: string[];
  /** Counts every answer that passed the check (the ledger check compares it with the settled runs). */
  answered?: { count: number };
}

export function chatBody(stream: boolean): string {
  const messages = [{ role: 'user', content: 'Say hello.' }];
  return JSON.stringify({ model: 'gpt-4o-mini', messages, max_tokens: 64, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
}

const answered = (stream: boolean) => (status: number, body: string) => status === 200 && (stream ? body.includes('data: [DONE]') : body.includes('"chat.completion"'));

let sequence = 0;
/** Saturated slices at `connections` (LOAD.connections): autocannon, the server's CPU per request beside. */
export function saturated(p: Proxy, stream: boolean, connections = LOAD.connections): Slice {
  const body = chatBody(stream);
  const ok = answered(stream);
  const check = (status: number, text: string) => {
    const good = ok(status, text);
    if (good && p.answered) p.answered.count++;
    return good;
  };
  const keys = p.keys;
  const requests: BenchRequest[] | undefined = keys && [
    { method: 'POST', setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...p.headers, authorization: `Bearer ${keys[sequence++ % keys.length]}` }, body }) },
  ];
  const name = `${p.name}, ${stream ? 'streamed' : 'whole'}`;
  return (seconds) => measureFor({ name, url: p.url, method: 'POST', headers: p.headers, body, check, pid: p.pid, connections, ...(requests ? { requests } : {}) }, seconds);
}

/** One connection, one request after the other: each latency without a queue, to the µs. */
function unloaded(p: Proxy): Slice {
  return oneConnection(`${p.name}, whole, 1 conn.`, p.url, { headers: p.headers, body: chatBody(false), check: answered(false) });
}

/** The server CPU per request of column `b` against column `a` (0: the floor): steadier than req/s on a shared machine. */
export function cpuLine(rounds: Figures[][], what = 'the proxy', b = 1): string {
  const [floor, edge] = [column(rounds, 0).cpu, column(rounds, b).cpu];
  if (!floor || !edge) return '';
  return `  server CPU per request (each server's process; PostgreSQL's own CPU not counted): ${edge.all.toFixed(0)} µs against ${what}'s ${floor.all.toFixed(0)} µs, ${(edge.all / floor.all).toFixed(2)} ×`;
}

/** Rows of every column of `rounds` (ratios to column 0), and a line when a request failed. */
export function rows(rounds: Figures[][], lines: string[]) {
  const base = column(rounds, 0).rps;
  for (let i = 0; i < rounds[0]!.length; i++) lines.push(row(column(rounds, i), base));
  if (rounds.flat().some((f) => f.failed > 0)) lines.push('some requests failed (FAILED above): those figures are not valid');
}

/** A set of child processes stopped together, last started first. */
export function children() {
  const all: ServerChild[] = [];
  return {
    start: async (label: string, args: string[], env: Record<string, string> = {}) => {
      const child = await startChild(label, args, env);
      all.push(child);
      return child;
    },
    stop: async () => {
      for (const child of all.splice(0).reverse()) await child.stop();
    },
  };
}

export const fakeArgs = [path.join(BENCH_DIR, 'relay-fake.mjs')];
export const floorArgs = [path.join(BENCH_DIR, 'relay-floor.mjs')];
export const edgeArgs = ['--import', 'tsx', path.join(BENCH_DIR, 'edge-server.ts')];
export const floorProxy = (s: ServerChild): Proxy => ({ name: 'bare proxy (undici)', url: `${s.url}/v1/chat/completions`, pid: s.child.pid, headers: { ...JSON_TYPE, authorization: `Bearer ${UPSTREAM_KEY}` } });

/** The chat part on SQLite: rows into `lines`, the verdicts of issue 33 returned. */
export async function chatPart(dataDir: string, lines: string[], latency: boolean): Promise<Verdict[]> {
  ensurePortkeyInstalled();
  const procs = children();
  try {
    const fake = await procs.start('relay fake upstream', fakeArgs);
    const floor = await procs.start('relay floor', floorArgs, { BENCH_UPSTREAM_URL: fake.url });
    const edge = await procs.start('edge + gateway', edgeArgs, { BENCH_EDGE_MODE: 'e2e', BENCH_DIR: dataDir, BENCH_UPSTREAM_URL: fake.url });
    const portkey = await procs.start('Portkey peer', [path.join(PORTKEY_DIR, 'server.mjs')]);
    const version = JSON.parse(fs.readFileSync(path.join(PORTKEY_DIR, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')).version;
    const proxies: Proxy[] = [
      floorProxy(floor),
      { name: 'edge + relay, SQLite', url: `${edge.url}/v1/chat/completions`, pid: edge.child.pid, headers: { ...JSON_TYPE, authorization: `Bearer ${String(edge.ready.token)}` } },
      {
        name: `Portkey ${version}`,
        url: `${portkey.url}/v1/chat/completions`,
        pid: portkey.child.pid,
        headers: { ...JSON_TYPE, authorization: `Bearer ${UPSTREAM_KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${fake.url}/v1` },
      },
    ];
    if (PROCESS_WARMUP > 0) for (const p of proxies) await saturated(p, false)(PROCESS_WARMUP);
    const whole = await alternate(proxies.map((p) => saturated(p, false)), ROUNDS, LOAD.sliceSeconds);
    rows(whole, lines);
    lines.push(cpuLine(whole));
    const streamed = await alternate(proxies.slice(0, 2).map((p) => saturated(p, true)), ROUNDS, LOAD.sliceSeconds);
    rows(streamed, lines);
    lines.push(cpuLine(streamed));
    const verdicts = [
      judge({ name: 'chat, SQLite, whole: edge / bare proxy req/s', ratio: rateRatio(1, 0), goal: 0.4, kind: 'min', rounds: whole }),
      judge({ name: 'chat, SQLite, streamed (50 chunks): edge / bare proxy req/s', ratio: rateRatio(1, 0), goal: 0.35, kind: 'min', rounds: streamed }),
      judge({ name: 'chat, SQLite, whole: edge / bare proxy CPU per call', ratio: cpuRatio(1, 0), goal: 4, kind: 'max', rounds: whole }),
      judge({ name: 'chat, SQLite, whole: edge / Portkey req/s', ratio: rateRatio(1, 2), goal: 2, kind: 'min', rounds: whole }),
      judge({ name: `chat, SQLite, whole: edge / bare proxy p99, ${LOAD.connections} conn.`, ratio: p99Ratio(1, 0), goal: 3, kind: 'max', rounds: whole }),
    ];
    if (latency) {
      const single = await alternate(proxies.slice(0, 2).map(unloaded), ROUNDS, LOAD.sliceSeconds);
      rows(single, lines);
      verdicts.push(judge({ name: 'chat, SQLite: added p50 ms, 1 conn.', ratio: (r) => r[1]!.p50 - r[0]!.p50, goal: 2, kind: 'max', rounds: single }));
    }
    await procs.stop();
    lines.push(...(await fastifyCost(dataDir, column(whole, 1).cpu?.all)));
    return verdicts;
  } finally {
    await procs.stop();
  }
}

/**
 * The kit's Fastify request cycle against node:http answering the same bytes, in one process (bench/edge-fastify.ts),
 * in alternating slices: the difference in CPU per request, and its share of the edge's CPU per chat call.
 */
async function fastifyCost(dataDir: string, edgeCpu: number | undefined): Promise<string[]> {
  const procs = children();
  try {
    const s = await procs.start('Fastify cycle', edgeArgs, { BENCH_EDGE_MODE: 'fastify', BENCH_DIR: dataDir });
    const proxies: Proxy[] = [
      { name: 'node:http, fixed completion', url: `${String(s.ready.httpUrl)}/v1/chat/completions`, pid: s.child.pid, headers: JSON_TYPE },
      { name: "kit's Fastify app, trivial route", url: `${s.url}/v1/chat/completions`, pid: s.child.pid, headers: JSON_TYPE },
    ];
    if (PROCESS_WARMUP > 0) for (const p of proxies) await saturated(p, false)(PROCESS_WARMUP);
    const rounds = await alternate(proxies.map((p) => saturated(p, false)), ROUNDS, LOAD.sliceSeconds);
    const lines: string[] = [];
    rows(rounds, lines);
    const [bare, kit] = [column(rounds, 0).cpu?.all, column(rounds, 1).cpu?.all];
    if (bare !== undefined && kit !== undefined) {
      const share = edgeCpu ? `, ${((100 * (kit - bare)) / edgeCpu).toFixed(0)} % of the edge's ${edgeCpu.toFixed(0)} µs per whole chat call above` : '';
      lines.push(`  Fastify's request cycle as the edge runs it (kit app: request id, log line, metrics, body schema): ${(kit - bare).toFixed(0)} µs of CPU per call above node:http (${kit.toFixed(0)} against ${bare.toFixed(0)} µs)${share}`);
    }
    return lines;
  } finally {
    await procs.stop();
  }
}
