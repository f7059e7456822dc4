/**
 * The edge section of `npm run bench` (issue 21), two parts:
 *
 * Admission: `POST /v1/responses` with SPEC's body, a fresh Idempotency-Key per request, against a floor of
 * the same transaction written by hand on the same driver (bench/edge-floor.mjs), on SQLite (temp files) and
 * on PostgreSQL (fresh schemas on BENCH_POSTGRES_URL, else TEST_POSTGRES_URL, else
 * postgres://postgres@127.0.0.1:5432/test; skipped when it does not answer). Each server has a database of its
 * own, made here from the edge's migrations with the same rows: the public model (reserve 1), BENCH_EDGE_WALLETS
 * (1,000) owners with one key each (the key service, as `edge key issue`) and a credited wallet (wallets/store's
 * credit, as `edge wallet credit`). The edge (bench/edge-server.ts admission) and the floor run in their own
 * processes; one hot wallet (every request with the first owner's key) and BENCH_EDGE_WALLETS wallets (the
 * client takes the next key for every request) are each measured in alternating slices. Target: edge ≥ 0.7 ×
 * the floor.
 *
 * End to end: `POST /v1/chat/completions` on the edge co-hosted with the gateway (bench/edge-server.ts e2e),
 * whose channel points at the relay bench's fake upstream (bench/relay-fake.mjs), against the relay bench's
 * bare undici proxy (bench/relay-floor.mjs) in front of the same fake; whole answers, at LOAD.connections
 * and at 1 connection. Targets: ≥ 0.6 × the proxy's req/s, added p50 ≤ 2 ms.
 *
 * Every server gets BENCH_EDGE_PROCESS_WARMUP_SECONDS of discarded load once started; each pair of rows is
 * followed by the ratio of the servers' CPU per request. BENCH_EDGE_PARTS (sqlite,postgres,chat) picks parts.
 *
 *   npx tsx bench/edge.ts          prints the section alone (also `BENCH_ONLY=edge npm run bench`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { migrate, openDatabase } from '../src/kit/db/index.js';
import type { EdgeContext } from '../src/edge/context.js';
import type { EdgeDB } from '../src/edge/db.js';
import { KeyService } from '../src/edge/keys/service.js';
import { edgeMigrations } from '../src/edge/migrations/index.js';
import { setModel } from '../src/edge/models/store.js';
import { credit } from '../src/edge/wallets/store.js';
import { alternate, BENCH_DIR, combine, dropSchema, HEADER, LOAD, measureFor, row, startChild, stealMeter, type BenchRequest, type Figures, type ServerChild, type Slice, runWhenMain } from './lib.js';
import { judge, verdictLines, type Verdict } from './targets.js';

const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? LOAD.rounds);
const WALLETS = Number(process.env.BENCH_EDGE_WALLETS ?? 1000);
/**
 * Load on a freshly started server before anything is measured (discarded), beyond alternate()'s warm-up: the
 * edge's first seconds (tsx, Kysely and Fastify code not yet optimised) otherwise cost its first case ~1.5 × the
 * CPU per request of the later ones.
 */
const PROCESS_WARMUP = Number(process.env.BENCH_EDGE_PROCESS_WARMUP_SECONDS ?? 5);
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MODEL = 'bench-model';
const ADMISSION_BODY = JSON.stringify({ publicModelId: MODEL, input: 'Say hello.' });
const CHAT_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64 });
const UPSTREAM_KEY = 'sk-bench-relay-key';
/** The parts to run (comma-separated; default all): sqlite, postgres, chat. */
const PARTS = new Set((process.env.BENCH_EDGE_PARTS ?? 'sqlite,postgres,chat').split(',').filter(Boolean));

const column = (rounds: Figures[][], i: number) => combine(rounds.map((r) => r[i]!));
const rateRatio = (round: Figures[]) => round[1]!.rps / round[0]!.rps;
const addedP50 = (round: Figures[]) => round[1]!.p50 - round[0]!.p50;

/** The server CPU per request of the two columns and their ratio: steadier than req/s on a shared machine. */
function cpuLine(rounds: Figures[][]): string {
  const [floor, edge] = [column(rounds, 0).cpu, column(rounds, 1).cpu];
  if (!floor || !edge) return '';
  return `  server CPU per request (the server's process; PostgreSQL's own CPU not counted): ${edge.all.toFixed(0)} µs against the floor's ${floor.all.toFixed(0)} µs, ${(edge.all / floor.all).toFixed(2)} ×`;
}

/** A PostgreSQL URL on the bench's schema `name`. */
function schemaUrl(name: string): string {
  const u = new URL(POSTGRES_URL);
  u.searchParams.set('schema', name);
  return u.toString();
}

/** Why PostgreSQL cannot be used, or undefined when it answers. */
async function postgresMissing(): Promise<string | undefined> {
  const u = new URL(POSTGRES_URL);
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (e) {
    return `PostgreSQL at ${u.host} not reachable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A fresh edge database at `url` from the edge's migrations: the public model MODEL (reserve 1), WALLETS owners
 * each with one key and a wallet of 10^12 units. Returns the keys, the hot wallet's first.
 */
async function prepareDatabase(url: string): Promise<string[]> {
  const database = await openDatabase<EdgeDB>(url);
  try {
    await migrate(database, 'edge', edgeMigrations(database.dialect));
    await setModel(database.db, MODEL, { reserveAmount: 1, enabled: true, gatewayModel: null, group: 'default', overdraft: 0 });
    return await database.db.transaction().execute(async (trx) => {
      const keys = new KeyService({ db: trx } as unknown as EdgeContext);
      const tokens: string[] = [];
      for (let i = 0; i < WALLETS; i++) {
        const issued = await keys.issue(`bench-${i}`);
        const owner = await trx.selectFrom('edge_owners').select('id').where('name', '=', issued.owner).executeTakeFirstOrThrow();
        await credit(trx, Number(owner.id), 1e12);
        tokens.push(issued.token);
      }
      return tokens;
    });
  } finally {
    await database.close();
  }
}

/** One admission server: where it listens and the keys of its own database. */
interface Admitter {
  name: string;
  url: string;
  pid: number | undefined;
  keys: string[];
}

let sequence = 0;
/** Saturated admission slices: every request a fresh Idempotency-Key and the next of `keys`. */
function admissionSlice(s: Admitter, label: string, keys: string[]): Slice {
  const tag = `bench-${process.pid}-${Date.now().toString(36)}`;
  const request: BenchRequest = {
    method: 'POST',
    setupRequest: (req) => ({
      ...req,
      headers: { ...req.headers, 'content-type': 'application/json', authorization: `Bearer ${keys[sequence % keys.length]}`, 'idempotency-key': `${tag}-${sequence++}` },
      body: ADMISSION_BODY,
    }),
  };
  const check = (status: number, body: string) => status === 202 && body.includes('"status":"reserved"');
  return (seconds) => measureFor({ name: `${s.name}, ${label}`, url: `${s.url}/v1/responses`, requests: [request], check, pid: s.pid }, seconds);
}

/** Both wallet shapes on one database kind: rows, and one verdict per shape. */
async function admissionPart(kind: string, floor: Admitter, edge: Admitter, lines: string[]): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  const shapes = [
    { label: '1 wallet', keys: (s: Admitter) => s.keys.slice(0, 1) },
    { label: `${WALLETS.toLocaleString('en-US')} wallets`, keys: (s: Admitter) => s.keys },
  ];
  for (const shape of shapes) {
    const rounds = await alternate([floor, edge].map((s) => admissionSlice(s, shape.label, shape.keys(s))), ROUNDS, LOAD.sliceSeconds);
    const base = column(rounds, 0).rps;
    lines.push(row(column(rounds, 0), base), row(column(rounds, 1), base), cpuLine(rounds));
    if (rounds.flat().some((f) => f.failed > 0)) lines.push('some requests failed (FAILED above): those figures are not valid');
    verdicts.push(judge({ name: `${kind}, ${shape.label}: edge / floor req/s`, ratio: rateRatio, goal: 0.7, kind: 'min', rounds }));
  }
  return verdicts;
}

/** Makes the two databases, starts the floor and the edge on them, measures both wallet shapes, stops both. */
async function admission(kind: string, urls: { floor: string; edge: string }, dataDir: string, lines: string[]): Promise<Verdict[]> {
  const [floorKeys, edgeKeys] = [await prepareDatabase(urls.floor), await prepareDatabase(urls.edge)];
  const children: ServerChild[] = [];
  try {
    const floor = await startChild(`edge floor (${kind})`, [path.join(BENCH_DIR, 'edge-floor.mjs')], { BENCH_FLOOR_DATABASE_URL: urls.floor });
    children.push(floor);
    const edge = await startChild(`edge (${kind})`, ['--import', 'tsx', path.join(BENCH_DIR, 'edge-server.ts')], { BENCH_EDGE_MODE: 'admission', BENCH_DIR: dataDir, EDGE_DATABASE_URL: urls.edge });
    children.push(edge);
    const servers: Admitter[] = [
      { name: `${kind} floor (by hand)`, url: floor.url, pid: floor.child.pid, keys: floorKeys },
      { name: `${kind} edge E01`, url: edge.url, pid: edge.child.pid, keys: edgeKeys },
    ];
    if (PROCESS_WARMUP > 0) for (const s of servers) await admissionSlice(s, 'process warm-up', s.keys)(PROCESS_WARMUP);
    return await admissionPart(kind, servers[0]!, servers[1]!, lines);
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

/** One of the two servers in front of the fake: where to POST the chat completion and with which key. */
interface Proxy {
  name: string;
  url: string;
  pid: number | undefined;
  headers: Record<string, string>;
}

const answered = (status: number, body: string) => status === 200 && body.includes('"chat.completion"');

function saturated(p: Proxy): Slice {
  return (seconds) => measureFor({ name: `${p.name}, chat`, url: p.url, method: 'POST', headers: p.headers, body: CHAT_BODY, check: answered, pid: p.pid }, seconds);
}

/** One connection, one request after the other (an undici Pool here): each latency without a queue, to the µs. */
function unloaded(p: Proxy): Slice {
  return async (seconds) => {
    const u = new URL(p.url);
    const pool = new Pool(u.origin, { connections: 1 });
    const latencies: number[] = [];
    let failed = 0;
    const steal = stealMeter();
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const res = await pool.request({ path: u.pathname, method: 'POST', headers: p.headers, body: CHAT_BODY });
        if (!answered(res.statusCode, await res.body.text())) failed++;
      } catch {
        failed++;
      }
      latencies.push(performance.now() - t);
    }
    await pool.close();
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!;
    return { name: `${p.name}, chat, 1 conn.`, rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), failed, total: latencies.length, steal: steal() };
  };
}

async function endToEnd(dataDir: string, lines: string[]): Promise<Verdict[]> {
  const children: ServerChild[] = [];
  const start = async (label: string, args: string[], env: Record<string, string> = {}) => {
    const child = await startChild(label, args, env);
    children.push(child);
    return child;
  };
  try {
    const fake = await start('relay fake upstream', [path.join(BENCH_DIR, 'relay-fake.mjs')]);
    const floor = await start('relay floor', [path.join(BENCH_DIR, 'relay-floor.mjs')], { BENCH_UPSTREAM_URL: fake.url });
    const edge = await start('edge + gateway', ['--import', 'tsx', path.join(BENCH_DIR, 'edge-server.ts')], { BENCH_EDGE_MODE: 'e2e', BENCH_DIR: dataDir, BENCH_UPSTREAM_URL: fake.url });
    const json = { 'content-type': 'application/json' };
    const proxies: Proxy[] = [
      { name: 'floor (undici proxy)', url: `${floor.url}/v1/chat/completions`, pid: floor.child.pid, headers: { ...json, authorization: `Bearer ${UPSTREAM_KEY}` } },
      { name: 'edge + relay E04', url: `${edge.url}/v1/chat/completions`, pid: edge.child.pid, headers: { ...json, authorization: `Bearer ${String(edge.ready.token)}` } },
    ];
    if (PROCESS_WARMUP > 0) for (const p of proxies) await saturated(p)(PROCESS_WARMUP);
    const full = await alternate(proxies.map(saturated), ROUNDS, LOAD.sliceSeconds);
    const single = await alternate(proxies.map(unloaded), ROUNDS, LOAD.sliceSeconds);
    for (const rounds of [full, single]) {
      const base = column(rounds, 0).rps;
      lines.push(row(column(rounds, 0), base), row(column(rounds, 1), base));
    }
    lines.push(cpuLine(full));
    if ([...full.flat(), ...single.flat()].some((f) => f.failed > 0)) lines.push('some requests failed (FAILED above): those figures are not valid');
    return [
      judge({ name: 'chat end to end: edge / floor req/s', ratio: rateRatio, goal: 0.6, kind: 'min', rounds: full }),
      judge({ name: `chat end to end: added p50 ms, ${LOAD.connections} conn.`, ratio: addedP50, goal: 2, kind: 'max', rounds: full }),
      judge({ name: 'chat end to end: added p50 ms, 1 conn.', ratio: addedP50, goal: 2, kind: 'max', rounds: single }),
    ];
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

export async function edgeBench(): Promise<string[]> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-edge-'));
  const schemas = { floor: schemaUrl('bench_edge_floor'), edge: schemaUrl('bench_edge_admission') };
  const lines = [
    `edge: admission (POST /v1/responses, SPEC body, fresh Idempotency-Key each) against the same transaction by hand on the same driver ` +
      `(bench/edge-floor.mjs), each on a database of its own made from the edge's migrations; 1 hot wallet, then ${WALLETS.toLocaleString('en-US')} wallets (a key each, ` +
      `the next key every request); then chat completions through the edge co-hosted with the gateway's relay against the bare undici proxy, both before the relay bench's fake upstream; ` +
      `autocannon at ${LOAD.connections} connections (and 1 for the chat latency); ${ROUNDS} alternating ${LOAD.sliceSeconds} s slices after ${LOAD.warmupSeconds} s warm-up each ` +
      `(and ${PROCESS_WARMUP} s of load on every server once started); every server its own process`,
    '',
    HEADER.replace(' × bare', '× floor'),
  ];
  const verdicts: Verdict[] = [];
  try {
    if (PARTS.has('sqlite')) {
      const sqliteDir = path.join(dataDir, 'sqlite');
      verdicts.push(...(await admission('SQLite', { floor: `sqlite://${sqliteDir}/floor.sqlite`, edge: `sqlite://${sqliteDir}/edge.sqlite` }, dataDir, lines)));
    }
    const missing = PARTS.has('postgres') ? await postgresMissing() : undefined;
    if (missing) lines.push(`PostgreSQL: skipped (${missing}; set BENCH_POSTGRES_URL)`);
    else if (PARTS.has('postgres')) {
      for (const u of Object.values(schemas)) await dropSchema(u, 'BENCH_POSTGRES_URL');
      verdicts.push(...(await admission('PostgreSQL', schemas, dataDir, lines)));
    }
    if (PARTS.has('chat')) {
      const e2eDir = path.join(dataDir, 'e2e');
      fs.mkdirSync(e2eDir);
      verdicts.push(...(await endToEnd(e2eDir, lines)));
    }
    if (verdicts.length) lines.push('', ...verdictLines(verdicts));
    return lines;
  } finally {
    if (PARTS.has('postgres') && !(await postgresMissing())) for (const u of Object.values(schemas)) await dropSchema(u, 'BENCH_POSTGRES_URL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, edgeBench);
