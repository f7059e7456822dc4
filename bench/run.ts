/**
 * `npm run bench`: bare Fastify baseline and the account cases, measured in one run with autocannon on
 * loopback, printed as req/s, p50/p99 and the ratio to the baseline. Then cross-instance revocation on
 * PostgreSQL + Redis (bench/revocation.ts; skipped when they are not reachable), the gateway cases when
 * bench/gateway.ts exists (it exports `gatewayBench(): Promise<string[]>`), and G33 over 1,000 channels against a
 * fake upstream (bench/channel-tests.ts). See docs/performance.md.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, HEADER, LOAD, measure, row, startServer, type ServerChild } from './lib.js';
import { accountBench, LOGIN_CONCURRENCY, sessionsRead } from './account.js';
import { FLOOR_TOKEN } from './users.js';
import { channelTestBench } from './channel-tests.js';
import { revocationBench } from './revocation.js';

const TARGET_READ = 0.6;
const TARGET_LOGIN = 0.9;

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

async function main() {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  console.log(`machine: ${os.cpus().length} cpu (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}, load avg ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`load: autocannon, loopback, ${LOAD.connections} connections (login and raw argon2: ${LOGIN_CONCURRENCY}), pipelining 1, ${LOAD.warmupSeconds}s warm-up + ${LOAD.seconds}s measured per case; servers in a child process`);
  console.log('');
  console.log(HEADER);

  const bare = await withServer('bare', {}, (s) => measure({ name: 'bare Fastify hello-world JSON', url: `${s.url}/` }));
  const baseline = bare.rps;
  console.log(row(bare, baseline, 'baseline'));

  const floor = await withServer('floor', {}, (s) => sessionsRead(s.url, FLOOR_TOKEN, 'minimal authenticated read (floor)'));

  const password = crypto.randomBytes(18).toString('base64url');
  const acc = await withServer('account', { BENCH_PASSWORD: password }, (s) => accountBench(s.url, password));
  const readRatio = acc.read.rps / baseline;
  const loginRatio = acc.login.rps / acc.argon2.rps;
  const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  console.log(row(acc.health, baseline, 'for reading the others: kit cost only'));
  console.log(row(floor, baseline, 'hand-written: no logs, hooks or metrics; see bench/server.ts'));
  console.log(row(acc.read, baseline, `target ≥ ${TARGET_READ}× bare: ${met(readRatio >= TARGET_READ)}`));
  console.log(row(acc.refresh, baseline));
  console.log(row(acc.argon2, baseline, 'in-process, no HTTP; alternating with login'));
  console.log(row(acc.login, baseline, `${loginRatio.toFixed(3)}× raw argon2id; target ≥ ${TARGET_LOGIN}: ${met(loginRatio >= TARGET_LOGIN)}`));

  // Measured again last: how far the shared machine drifted during the run.
  const again = await withServer('bare', {}, (s) => measure({ name: 'bare Fastify again (drift check)', url: `${s.url}/` }));
  console.log(row(again, baseline, 'same as the first row when the machine was steady'));

  const failed = [bare, again, floor, acc.health, acc.read, acc.refresh, acc.login, acc.argon2].some((f) => f.failed > 0);
  if (failed) {
    console.log('some requests failed (see FAILED above): the figures of those cases are not valid');
    process.exitCode = 1;
  }

  await part('revocation', 'BENCH_SKIP_REVOCATION', revocationBench);
  await part('gateway', undefined, gatewayLines);
  await part('G33', 'BENCH_SKIP_CHANNEL_TESTS', channelTestBench);
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
