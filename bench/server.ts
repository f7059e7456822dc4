/**
 * A server process for `npm run bench`, started by bench/lib.ts startServer():
 *   bare     a Fastify hello-world JSON route (no logger, like fastify/benchmarks), and /page-sized: a fixed
 *            JSON body as large as a 100-channel gateway page
 *   floor    the least any implementation of the authenticated session list can do on this stack: Fastify
 *            without logging or hooks, a bearer looked up in a map (like a verified-token cache hit), one
 *            prepared better-sqlite3 query of the same shape as the real one, the envelope. Not a product
 *            path: it shows how close to bare Fastify such a read can get at all on this machine.
 *   account  the real account app (buildAccountApp) on a temp SQLite DATA_DIR, with the bench users; or, for
 *            bench/revocation.ts, on BENCH_ACCOUNT_DATABASE_URL with BENCH_REDIS_URL (+ BENCH_REDIS_KEY_PREFIX),
 *            BENCH_SESSION_SECRET, and BENCH_CREATE_USERS=0 for the instances after the first
 * Reports {url} over IPC once listening; stops on the "stop" message or when the parent goes away.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { buildAccountApp } from '../src/account/app.js';
import { ROLE } from '../src/account/db.js';
import { BENCH_USERS, FLOOR_TOKEN } from './users.js';


/** A fixed JSON body the size of a 100-channel G01/G27 page (~88 kB), for the gateway's paced floor. */
const PAGE_SIZED_BODY = JSON.stringify({
  success: true,
  data: { items: Array.from({ length: 100 }, (_, id) => ({ id, name: `channel-${id}`, models: Array.from({ length: 40 }, (_, m) => `model-${m}`).join(','), filler: 'x'.repeat(475) })) },
});

async function bare(): Promise<{ app: FastifyInstance; cleanup(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  app.get('/page-sized', (_req, reply) => reply.type('application/json; charset=utf-8').send(PAGE_SIZED_BODY));
  return { app, cleanup: async () => {} };
}

async function floor(): Promise<{ app: FastifyInstance; cleanup(): Promise<void> }> {
  const db = new Database(':memory:');
  db.exec(`create table user_sessions (sid text primary key, user_id integer not null, user_auth_version integer not null,
    status text not null, login_method text not null, ip text not null, user_agent text not null,
    created_at integer not null, last_active_at integer not null, expires_at integer not null)`);
  db.exec('create index user_sessions_user_status on user_sessions (user_id, status)');
  const now = Math.floor(Date.now() / 1000);
  db.prepare(`insert into user_sessions values ('sid-1', 1, 1, 'active', 'password', '127.0.0.1', 'autocannon', ?, ?, ?)`).run(now, now, now + 86400);
  const list = db.prepare(`select sid, login_method, ip, user_agent, created_at, last_active_at, expires_at from user_sessions
    where user_id = ? and status = 'active' and expires_at > ? and user_auth_version = ?
    order by last_active_at desc, created_at desc limit 100`);
  const verified = new Map([[FLOOR_TOKEN, { userId: 1, sid: 'sid-1', uv: 1 }]]);
  const app = Fastify({ logger: false });
  app.get('/api/user/sessions', async (req, reply) => {
    const header = req.headers.authorization;
    const claims = header?.startsWith('Bearer ') ? verified.get(header.slice(7)) : undefined;
    reply.header('Cache-Control', 'no-store');
    if (!claims) return reply.code(401).send({ success: false, code: 'AUTH_UNAUTHORIZED', message: '' });
    const rows = list.all(claims.userId, Math.floor(Date.now() / 1000), claims.uv) as { sid: string }[];
    return { success: true, message: '', data: rows.map((r) => ({ ...r, current: r.sid === claims.sid })) };
  });
  return {
    app,
    cleanup: async () => {
      db.close();
    },
  };
}

async function account(): Promise<{ app: FastifyInstance; cleanup(): Promise<void> }> {
  const password = process.env.BENCH_PASSWORD;
  if (!password) throw new Error('BENCH_PASSWORD is not set');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-account-'));
  const env = process.env;
  const config = loadConfig({
    DATA_DIR: dataDir,
    // A shared database, Redis and session secret make several of these processes instances of one deployment.
    ACCOUNT_DATABASE_URL: env.BENCH_ACCOUNT_DATABASE_URL ?? `sqlite://${dataDir}/account.sqlite`,
    ...(env.BENCH_REDIS_URL ? { REDIS_URL: env.BENCH_REDIS_URL, REDIS_KEY_PREFIX: env.BENCH_REDIS_KEY_PREFIX ?? '' } : {}),
    ...(env.BENCH_SESSION_SECRET ? { SESSION_SECRET: env.BENCH_SESSION_SECRET } : {}),
    LOG_LEVEL: 'info',
    CRITICAL_RATE_LIMIT_ENABLED: 'false',
    USER_SESSION_ACTIVE_LIMIT: '1000000',
    USER_SESSION_ISSUANCE_LIMIT: '1000000',
  });
  const runtime = createRuntime(config);
  let built: Awaited<ReturnType<typeof buildAccountApp>>;
  try {
    built = await buildAccountApp(config, runtime);
    // A further instance of a shared database finds the users already there.
    for (const username of env.BENCH_CREATE_USERS === '0' ? [] : BENCH_USERS) {
      await built.services.users.insertUser({ username, password, email: null, role: ROLE.user });
    }
  } catch (e) {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const { app } = built;
  return {
    app,
    async cleanup() {
      await runtime.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function main() {
  const kind = process.argv[2];
  const built = kind === 'bare' ? await bare() : kind === 'floor' ? await floor() : kind === 'account' ? await account() : null;
  if (!built) throw new Error(`unknown bench server kind "${kind}"`);
  await built.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = built.app.server.address() as { port: number };
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await built.app.close();
    await built.cleanup();
    process.exit(0);
  };
  process.on('message', (m) => m === 'stop' && void stop());
  process.on('disconnect', () => void stop());
  process.send!({ url: `http://127.0.0.1:${port}` });
}

main().catch((e) => {
  process.send?.({ error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
