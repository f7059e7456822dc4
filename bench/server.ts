/**
 * A server process for `npm run bench`, started by bench/lib.ts startServer():
 *   bare     a Fastify hello-world JSON route (no logger, like fastify/benchmarks)
 *   account  the real account app (buildAccountApp) on a temp SQLite DATA_DIR, with the bench users
 * Reports {url} over IPC once listening; stops on the "stop" message or when the parent goes away.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config/index.js';
import { createRuntime } from '../src/runtime.js';
import { buildAccountApp } from '../src/account/app.js';
import { ROLE } from '../src/account/db.js';
import { BENCH_USERS } from './users.js';


async function bare(): Promise<{ app: FastifyInstance; cleanup(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.get('/', async () => ({ hello: 'world' }));
  return { app, cleanup: async () => {} };
}

async function account(): Promise<{ app: FastifyInstance; cleanup(): Promise<void> }> {
  const password = process.env.BENCH_PASSWORD;
  if (!password) throw new Error('BENCH_PASSWORD is not set');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-account-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ACCOUNT_DATABASE_URL: `sqlite://${dataDir}/account.sqlite`,
    LOG_LEVEL: 'info',
    CRITICAL_RATE_LIMIT_ENABLED: 'false',
    USER_SESSION_ACTIVE_LIMIT: '1000000',
    USER_SESSION_ISSUANCE_LIMIT: '1000000',
  });
  const runtime = createRuntime(config);
  let built: Awaited<ReturnType<typeof buildAccountApp>>;
  try {
    built = await buildAccountApp(config, runtime);
    for (const username of BENCH_USERS) {
      await built.ctx.services.users.insertUser({ username, password, email: null, role: ROLE.user });
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
  const built = kind === 'bare' ? await bare() : kind === 'account' ? await account() : null;
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
