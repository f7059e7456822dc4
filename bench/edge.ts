/**
 * The edge section of `npm run bench` (issues 21 and 33), in parts (BENCH_EDGE_PARTS, default
 * sqlite,postgres,chat,chat-postgres; `latency` adds the one-connection chat latency of issue 21):
 *
 * Admission (sqlite, postgres): `POST /v1/responses` with SPEC's body, a fresh Idempotency-Key per request,
 * against a floor of the same transaction written by hand on the same driver (bench/edge-floor.mjs), on SQLite
 * (temp files) and on PostgreSQL (fresh schemas on BENCH_POSTGRES_URL, else TEST_POSTGRES_URL, else
 * postgres://postgres@127.0.0.1:5432/test; skipped when it does not answer). Each server has a database of its
 * own, made here from the edge's migrations with the same rows (bench/edge-db.ts): the public model (reserve
 * 1), BENCH_EDGE_WALLETS (1,000) owners with one key each and a credited wallet. The edge (bench/edge-server.ts
 * admission) and the floor run in their own processes; one hot wallet (every request with the first owner's
 * key) and BENCH_EDGE_WALLETS wallets (the client takes the next key for every request) are each measured in
 * alternating slices. Target: edge ≥ 0.7 × the floor.
 *
 * Chat (chat): the edge co-hosted with the gateway on SQLite against the bare undici proxy and Portkey, whole
 * and streamed, and the cost of Fastify's request cycle (bench/edge-chat.ts). Chat on PostgreSQL
 * (chat-postgres): 1,000 wallets, one and two edge instances on one database, and the ledger check after the
 * load (bench/edge-scale.ts).
 *
 * Every server gets BENCH_EDGE_PROCESS_WARMUP_SECONDS of discarded load once started.
 *
 *   npx tsx bench/edge.ts          prints the section alone (also `BENCH_ONLY=edge npm run bench`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alternate, BENCH_DIR, dropSchema, HEADER, LOAD, measureFor, startChild, type BenchRequest, type ServerChild, type Slice, runWhenMain } from './lib.js';
import { docsTable, judge, rateRatio, verdictLines, type Verdict } from './targets.js';
import { postgresMissing, prepareDatabase, schemaUrl, WALLETS } from './edge-db.js';
import { chatPart, cpuLine, PROCESS_WARMUP, ROUNDS, rows } from './edge-chat.js';
import { postgresPart } from './edge-scale.js';

const MODEL = 'bench-model';
const ADMISSION_BODY = JSON.stringify({ publicModelId: MODEL, input: 'Say hello.' });
/** The parts to run (comma-separated): sqlite, postgres, chat, chat-postgres, latency. */
const PARTS = new Set((process.env.BENCH_EDGE_PARTS ?? 'sqlite,postgres,chat,chat-postgres').split(',').filter(Boolean));

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
    rows(rounds, lines);
    lines.push(cpuLine(rounds, 'the floor'));
    verdicts.push(judge({ name: `admission, ${kind}, ${shape.label}: edge / floor req/s`, ratio: rateRatio(1, 0), goal: 0.7, kind: 'min', rounds }));
  }
  return verdicts;
}

/** Makes the two databases, starts the floor and the edge on them, measures both wallet shapes, stops both. */
async function admission(kind: string, urls: { floor: string; edge: string }, dataDir: string, lines: string[]): Promise<Verdict[]> {
  const [floorKeys, edgeKeys] = [await prepareDatabase(urls.floor, MODEL, 1), await prepareDatabase(urls.edge, MODEL, 1)];
  const children: ServerChild[] = [];
  try {
    const floor = await startChild(`edge floor (${kind})`, ['--import', 'tsx', path.join(BENCH_DIR, 'edge-floor.mjs')], { BENCH_FLOOR_DATABASE_URL: urls.floor });
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

export async function edgeBench(): Promise<string[]> {
  const loadAverage = os.loadavg();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-edge-'));
  const schemas = { floor: schemaUrl('bench_edge_floor'), edge: schemaUrl('bench_edge_admission'), chat: schemaUrl('bench_edge_e2e') };
  const wallets = WALLETS.toLocaleString('en-US');
  const lines = [
    `edge: admission (POST /v1/responses, SPEC body, fresh Idempotency-Key each) against the same transaction by hand on the same driver ` +
      `(bench/edge-floor.mjs), each on a database of its own made from the edge's migrations; 1 hot wallet, then ${wallets} wallets (a key each, ` +
      `the next key every request); then chat completions through the edge co-hosted with the gateway's relay against the bare undici proxy and Portkey, all before the relay bench's fake upstream, ` +
      `whole and streamed, on SQLite, then on PostgreSQL with ${wallets} wallets and one or two edge instances; ` +
      `autocannon at ${LOAD.connections} connections; ${ROUNDS} alternating ${LOAD.sliceSeconds} s slices after ${LOAD.warmupSeconds} s warm-up each ` +
      `(and ${PROCESS_WARMUP} s of load on every server once started); every server its own process`,
    '',
    HEADER.replace(' × bare', '× first'),
  ];
  const verdicts: Verdict[] = [];
  const usesPostgres = PARTS.has('postgres') || PARTS.has('chat-postgres');
  const missing = usesPostgres ? await postgresMissing() : undefined;
  const dropAll = async () => {
    for (const u of Object.values(schemas)) await dropSchema(u, 'BENCH_POSTGRES_URL');
  };
  try {
    if (usesPostgres && !missing) await dropAll();
    if (PARTS.has('sqlite')) {
      const sqliteDir = path.join(dataDir, 'sqlite');
      verdicts.push(...(await admission('SQLite', { floor: `sqlite://${sqliteDir}/floor.sqlite`, edge: `sqlite://${sqliteDir}/edge.sqlite` }, dataDir, lines)));
    }
    if (missing) lines.push(`PostgreSQL: skipped (${missing}; set BENCH_POSTGRES_URL)`);
    else if (PARTS.has('postgres')) verdicts.push(...(await admission('PostgreSQL', schemas, dataDir, lines)));
    if (PARTS.has('chat')) {
      const e2eDir = path.join(dataDir, 'e2e');
      fs.mkdirSync(e2eDir);
      verdicts.push(...(await chatPart(e2eDir, lines, PARTS.has('latency'))));
    }
    if (PARTS.has('chat-postgres') && !missing) verdicts.push(...(await postgresPart(schemas.chat, path.join(dataDir, 'e2e-postgres'), lines)));
    if (verdicts.length) lines.push('', ...verdictLines(verdicts), '', 'for docs/performance.md (edge):', ...docsTable(verdicts, loadAverage));
    return lines;
  } finally {
    if (usesPostgres && !missing) await dropAll();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runWhenMain(import.meta.url, edgeBench);
