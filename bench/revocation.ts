/**
 * Cross-instance revocation (part of `npm run bench`; alone: `npx tsx bench/revocation.ts`). Two account
 * instances (bench/server.ts account, each its own process) share a PostgreSQL schema, Redis and the
 * session secret. One user logs in ROUNDS + 1 times; then, for every session but the last: instance 2
 * accepts its access token (so instance 2 holds the session's state in its cache), A44 revokes it on
 * instance 1 with the last session's token, and instance 2 is polled with the revoked token, one request
 * after the other, until it refuses it. Recorded: the time from sending A44, and from A44's answer, to
 * the first refusal. Target: p99 under 1 s.
 *
 * Without the invalidation message an instance may serve a session from its cache for STATE_CACHE_MS
 * (1 s) after the revocation, so the figures show whether the message, not the cache's expiry, does it.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool } from 'undici';
import { inBatches, login } from './account.js';
import { dropSchema, startServer, stealMeter, stealNote, type ServerChild } from './lib.js';
import { READER } from './users.js';

const DATABASE_URL = process.env.BENCH_REVOCATION_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test?schema=bench_revocation';
const REDIS_URL = process.env.BENCH_REVOCATION_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROUNDS = Number(process.env.BENCH_REVOCATION_ROUNDS ?? 1000);
const TARGET_MS = 1000;
/** A round whose token is still accepted this long after A44 was sent fails the run. */
const GIVE_UP_MS = 5000;
/** An authenticated read of the account app that costs little: the caller's OAuth bindings (A31). */
const PROBE_PATH = '/api/user/oauth/bindings';

/** Both services answer, or the reason they do not (the case is then skipped, not failed). */
async function servicesMissing(): Promise<string | undefined> {
  const u = new URL(DATABASE_URL);
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (e) {
    return `PostgreSQL at ${u.host} not reachable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    await client.end().catch(() => {});
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    return `Redis at ${new URL(REDIS_URL).host} not reachable (${e instanceof Error ? e.message : String(e)})`;
  } finally {
    redis.disconnect();
  }
  return undefined;
}

function sidOf(accessToken: string): string {
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { sid?: string };
  if (!claims.sid) throw new Error('access token without a sid');
  return claims.sid;
}

type Round = { fromSend: number; fromAnswer: number; acceptedAfterAnswer: number };

/** One revocation: A44 on instance 1 while instance 2 is polled with the revoked token. */
async function revokeAndPoll(one: Pool, two: Pool, controller: string, token: string): Promise<Round> {
  const probe = async () => {
    const res = await two.request({ path: PROBE_PATH, method: 'GET', headers: { authorization: `Bearer ${token}` } });
    const body = await res.body.text();
    return { status: res.statusCode, body, at: performance.now() };
  };
  const warm = await probe();
  if (warm.status !== 200) throw new Error(`instance 2 refused a live session (${warm.status} ${warm.body.slice(0, 120)})`);
  const sent = performance.now();
  let answered: number | undefined;
  const revoke = one
    .request({ path: `/api/user/sessions/${encodeURIComponent(sidOf(token))}`, method: 'DELETE', headers: { authorization: `Bearer ${controller}` } })
    .then(async (res) => {
      const body = await res.body.text();
      answered = performance.now();
      if (res.statusCode !== 200 || !body.includes('"success":true')) throw new Error(`A44 failed: ${res.statusCode} ${body.slice(0, 120)}`);
    });
  let acceptedAfterAnswer = 0;
  let refusedAt: number | undefined;
  while (refusedAt === undefined) {
    const r = await probe();
    if (r.status === 401) {
      if (!r.body.includes('AUTH_SESSION_REVOKED')) throw new Error(`unexpected refusal: ${r.body.slice(0, 120)}`);
      refusedAt = r.at;
    } else if (r.status !== 200) {
      throw new Error(`instance 2 answered ${r.status}: ${r.body.slice(0, 120)}`);
    } else {
      if (answered !== undefined) acceptedAfterAnswer++;
      if (r.at - sent > GIVE_UP_MS) throw new Error(`the revoked session was still accepted ${GIVE_UP_MS} ms after A44`);
    }
  }
  await revoke;
  return { fromSend: refusedAt - sent, fromAnswer: Math.max(0, refusedAt - answered!), acceptedAfterAnswer };
}

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

export async function revocationBench(): Promise<string[]> {
  const missing = await servicesMissing();
  if (missing) return [`revocation: skipped: ${missing}`];
  await dropSchema(DATABASE_URL, 'BENCH_REVOCATION_DATABASE_URL');
  const password = crypto.randomBytes(18).toString('base64url');
  const shared = {
    BENCH_PASSWORD: password,
    BENCH_ACCOUNT_DATABASE_URL: DATABASE_URL,
    BENCH_REDIS_URL: REDIS_URL,
    // Its own channel names, so nothing else on this Redis hears (or sends) its invalidations.
    BENCH_REDIS_KEY_PREFIX: `bench-revocation-${crypto.randomBytes(4).toString('hex')}:`,
    BENCH_SESSION_SECRET: crypto.randomBytes(32).toString('hex'),
  };
  const servers: ServerChild[] = [];
  try {
    // One after the other: the first creates the tables and the users.
    servers.push(await startServer('account', shared));
    servers.push(await startServer('account', { ...shared, BENCH_CREATE_USERS: '0' }));
    const [a, b] = servers as [ServerChild, ServerChild];
    let next = 0;
    const t0 = performance.now();
    const sessions = await inBatches(ROUNDS + 1, 8, () => login(next++ % 2 ? b.url : a.url, READER, password));
    const loginS = (performance.now() - t0) / 1000;
    const controller = sessions.pop()!.accessToken;
    const one = new Pool(a.url, { connections: 1 });
    const two = new Pool(b.url, { connections: 1 });
    const rounds: Round[] = [];
    const steal = stealMeter();
    try {
      for (const s of sessions) rounds.push(await revokeAndPoll(one, two, controller, s.accessToken));
    } finally {
      await one.close();
      await two.close();
    }
    const stolen = steal();
    const fromSend = percentiles(rounds.map((r) => r.fromSend));
    const fromAnswer = percentiles(rounds.map((r) => r.fromAnswer));
    const stale = rounds.filter((r) => r.acceptedAfterAnswer > 0).length;
    const row = (name: string, p: ReturnType<typeof percentiles>) => `  ${name.padEnd(28)} p50 ${ms(p.p50)}, p95 ${ms(p.p95)}, p99 ${ms(p.p99)}, max ${ms(p.max)}`;
    return [
      `revocation across instances: two account processes on PostgreSQL (${new URL(DATABASE_URL).host}) + Redis (${new URL(REDIS_URL).host}); ${ROUNDS} sessions of one user (logged in over HTTP in ${loginS.toFixed(1)} s), each revoked by A44 on instance 1 while instance 2 is polled with its access token (${PROBE_PATH}, one request at a time)`,
      row('A44 sent → first refusal', fromSend),
      row('A44 answered → first refusal', fromAnswer),
      `  rounds where instance 2 still accepted the token after A44 answered: ${stale} of ${rounds.length}${stolen === undefined ? '' : `; ${stealNote(stolen)}`}`,
      `  target p99 < ${TARGET_MS} ms (from A44's answer): ${fromAnswer.p99 < TARGET_MS ? 'MET' : 'MISSED'}`,
    ];
  } finally {
    for (const s of servers) await s.stop();
    await dropSchema(DATABASE_URL, 'BENCH_REVOCATION_DATABASE_URL');
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  revocationBench()
    .then((lines) => console.log(lines.join('\n')))
    .catch((e) => {
      console.error(`revocation bench failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
      process.exitCode = 1;
    })
    .finally(() => process.exit());
}
