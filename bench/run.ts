/**
 * `npm run bench`: bare Fastify baseline and the account cases, measured in one run with autocannon on
 * loopback, printed as req/s, p50/p99 and the ratio to the baseline, then the better-auth peer
 * (bench/peer.ts), the issue 15 targets with their verdicts, cross-instance revocation on PostgreSQL + Redis
 * (bench/revocation.ts; skipped when they are not reachable), the gateway cases when bench/gateway.ts exists
 * (it exports `gatewayBench(): Promise<string[]>`), G33 over 1,000 channels against a fake upstream
 * (bench/channel-tests.ts), the relay against a bare proxy and Portkey (bench/relay.ts), the relay's failover
 * through flapping upstreams beside Portkey's fallback and retries (bench/chaos.ts), the edge's
 * admission against a floor written by hand and its chat completions against the bare proxy and Portkey, on
 * SQLite and on PostgreSQL with one and two instances and a ledger check (bench/edge.ts), and start-up and CLI times
 * of the compiled build beside `node -e 0` (bench/startup.ts).
 * `npx tsx bench/run.ts account peer` (or BENCH_ONLY=account,peer) runs only the sections named. See
 * docs/performance.md.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, combine, HEADER, LOAD, measure, row, startServer, type Figures, type ServerChild } from './lib.js';
import { accountBench, LOGIN_CONCURRENCY } from './account.js';
import { ensurePeerInstalled, peerBench } from './peer.js';
import { cpuRatio, docsTable, judge, rateRatio, verdictLines, type Verdict } from './targets.js';
import { FLOOR_TOKEN } from './users.js';
import { channelTestBench } from './channel-tests.js';
import { revocationBench } from './revocation.js';
import { relayBench } from './relay.js';
import { chaosBench } from './chaos.js';
import { edgeBench } from './edge.js';
import { startupBench } from './startup.js';

const SECTIONS = ['account', 'peer', 'revocation', 'gateway', 'g33', 'relay', 'chaos', 'edge', 'startup'] as const;
type Section = (typeof SECTIONS)[number];

/** The sections to run: the command's arguments, else BENCH_ONLY (comma-separated), else all. */
function selectedSections(): Set<Section> {
  const asked = process.argv.slice(2).length ? process.argv.slice(2) : (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  for (const name of asked) if (!SECTIONS.includes(name as Section)) throw new Error(`unknown bench section "${name}" (${SECTIONS.join(', ')})`);
  return new Set(asked.length ? (asked as Section[]) : SECTIONS);
}

async function withServer<T>(kind: string, env: Record<string, string>, fn: (s: ServerChild) => Promise<T>): Promise<T> {
  const server = await startServer(kind, env);
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

async function gatewayLines(): Promise<string[]> {
  if (process.env.BENCH_SKIP_GATEWAY === '1') return ['gateway: skipped (BENCH_SKIP_GATEWAY=1)'];
  const file = path.join(BENCH_DIR, 'gateway.ts');
  if (!fs.existsSync(file)) return ['gateway: skipped (bench/gateway.ts not present)'];
  const mod = (await import(pathToFileURL(file).href)) as { gatewayBench?: () => Promise<string[]> };
  if (typeof mod.gatewayBench !== 'function') throw new Error('bench/gateway.ts does not export gatewayBench()');
  return mod.gatewayBench();
}

/** Every figure printed, so a failed request anywhere makes the command fail. */
const printed: Figures[] = [];
function print(f: Figures, baseline: number | undefined, notes = ''): void {
  printed.push(f);
  console.log(row(f, baseline, notes));
}
const column = (rounds: Figures[][], i: number) => combine(rounds.map((r) => r[i]!));

async function account(password: string): Promise<Verdict[]> {
  const bare = await withServer('bare', {}, (s) => measure({ name: 'bare Fastify hello-world JSON', url: `${s.url}/`, pid: s.child.pid }));
  const baseline = bare.rps;
  print(bare, baseline, 'baseline');
  const acc = await withServer('floor', {}, (floor) =>
    withServer('account', { BENCH_PASSWORD: password }, (s) =>
      accountBench({ url: s.url, pid: s.child.pid! }, { url: floor.url, pid: floor.child.pid! }, FLOOR_TOKEN, password),
    ),
  );
  const alternating = `${LOAD.rounds} alternating slices`;
  print(acc.health, baseline, 'for reading the others: kit cost only');
  print(column(acc.readRounds, 0), baseline, `hand-written, see bench/server.ts; ${alternating} with A43`);
  print(column(acc.readRounds, 1), baseline, alternating);
  print(acc.refresh, baseline);
  print(column(acc.loginRounds, 0), baseline, `in-process, no HTTP; ${LOAD.loginRounds} alternating slices with login`);
  print(column(acc.loginRounds, 1), baseline);
  // Measured again last: how far the shared machine drifted during the run.
  const again = await withServer('bare', {}, (s) => measure({ name: 'bare Fastify again (drift check)', url: `${s.url}/`, pid: s.child.pid }));
  print(again, baseline, 'same as the first row when the machine was steady');
  return [
    judge({ name: 'A43 read / floor (req/s)', ratio: rateRatio(1, 0), goal: 0.8, kind: 'min', rounds: acc.readRounds }),
    judge({ name: 'A43 / floor server CPU per read', ratio: cpuRatio(1, 0), goal: 1.5, kind: 'max', rounds: acc.readRounds }),
    judge({ name: 'login / raw argon2id verify', ratio: rateRatio(1, 0), goal: 0.85, kind: 'min', rounds: acc.loginRounds }),
  ];
}

async function peer(password: string): Promise<Verdict[]> {
  const figures = await peerBench(password);
  const alternating = (n: number) => `${n} alternating slices`;
  print(column(figures.readRounds, 0), undefined, alternating(LOAD.rounds));
  print(column(figures.readRounds, 1), undefined, 'session cookie, no cookie cache');
  print(column(figures.loginRounds, 0), undefined, alternating(LOAD.loginRounds));
  print(column(figures.loginRounds, 1), undefined, 'argon2id at our parameters (checked)');
  return [
    judge({ name: 'A43 read / better-auth get-session', ratio: rateRatio(0, 1), goal: 20, kind: 'min', rounds: figures.readRounds }),
    judge({ name: 'login / better-auth sign-in', ratio: rateRatio(0, 1), goal: 1, kind: 'min', rounds: figures.loginRounds }),
  ];
}

async function main() {
  const sections = selectedSections();
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  const loadAverage = os.loadavg();
  console.log(`machine: ${os.cpus().length} cpu (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load avg ${loadAverage.map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`sections: ${[...sections].join(', ')}`);

  const verdicts: Verdict[] = [];
  if (sections.has('account') || sections.has('peer')) {
    if (sections.has('peer')) ensurePeerInstalled();
    console.log(
      `load: autocannon, loopback, ${LOAD.connections} connections (login, sign-in and raw argon2: ${LOGIN_CONCURRENCY}), pipelining 1, ` +
        `${LOAD.warmupSeconds}s warm-up + ${LOAD.seconds}s measured per case, compared cases in alternating ${LOAD.sliceSeconds}s slices; servers in child processes`,
    );
    console.log('');
    console.log(HEADER);
    const password = crypto.randomBytes(18).toString('base64url');
    if (sections.has('account')) verdicts.push(...(await account(password)));
    if (sections.has('peer')) verdicts.push(...(await peer(password)));
    if (printed.some((f) => f.failed > 0)) {
      console.log('some requests failed (see FAILED above): the figures of those cases are not valid');
      process.exitCode = 1;
    }
    console.log('');
    for (const line of verdictLines(verdicts)) console.log(line);
    console.log('');
    console.log('for docs/performance.md:');
    for (const line of docsTable(verdicts, loadAverage)) console.log(line);
  }

  if (sections.has('revocation')) await part('revocation', 'BENCH_SKIP_REVOCATION', revocationBench);
  if (sections.has('gateway')) await part('gateway', undefined, gatewayLines);
  if (sections.has('g33')) await part('G33', 'BENCH_SKIP_CHANNEL_TESTS', channelTestBench);
  if (sections.has('relay')) await part('relay', 'BENCH_SKIP_RELAY', relayBench);
  if (sections.has('chaos')) await part('chaos', 'BENCH_SKIP_CHAOS', chaosBench);
  if (sections.has('edge')) await part('edge', 'BENCH_SKIP_EDGE', edgeBench);
  if (sections.has('startup')) await part('startup', 'BENCH_SKIP_STARTUP', startupBench);
}

/** Prints one further part of the run after a blank line (or that `skip`=1 skipped it); a part that throws fails the run. */
async function part(name: string, skip: string | undefined, lines: () => Promise<string[]>) {
  console.log('');
  try {
    for (const line of skip && process.env[skip] === '1' ? [`${name}: skipped (${skip}=1)`] : await lines()) console.log(line);
  } catch (e) {
    console.log(`${name}: failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}

main()
  .catch((e) => {
    console.error(`bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    process.exitCode = 1;
  })
  .finally(() => process.exit());
