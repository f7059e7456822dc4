import fs from 'node:fs';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { buildAccountApp } from '../../src/account/app.js';
import { ROLE } from '../../src/account/db.js';
import { captureLog } from './log-capture.js';
import { freshDatabase, freshSchema, tempDir, type Variant } from './services.js';
import { Browser } from './http.js';
import type { CustomerHolder } from '../../src/contract/customer.js';

export const SESSION_SECRET = 'test-session-secret-0123456789abcdef0123456789';

export interface AccountServer {
  url: string;
  ctx: Awaited<ReturnType<typeof buildAccountApp>>['ctx'];
  services: Awaited<ReturnType<typeof buildAccountApp>>['services'];
  app: Awaited<ReturnType<typeof buildAccountApp>>['app'];
  log: ReturnType<typeof captureLog>;
  dataDir: string;
  /** The environment it runs with: an operator CLI given it acts on the same database and bus. */
  env: Record<string, string>;
  browser(): Browser;
  /** Creates a user directly through the service (password hashed as usual). */
  createUser(username: string, password: string, opts?: { role?: number; email?: string }): Promise<number>;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Share the database of an earlier server (a second instance). */
  databaseUrl?: string;
  dataDir?: string;
  /** The edge's customer port as a co-hosted edge hands it over (src/services.ts); absent: no edge. */
  customers?: CustomerHolder;
  /** A port chosen beforehand (a browser test that needs its origin in the configuration); default: any free one. */
  port?: number;
}

/**
 * Starts a real account listener on 127.0.0.1 with a random port, on the variant's database (a fresh
 * PostgreSQL schema or MySQL database per server unless databaseUrl is given). Rate limits are off unless env turns them on.
 */
export async function startAccount(variant: Variant, opts: StartOptions = {}): Promise<AccountServer> {
  const dataDir = opts.dataDir ?? tempDir();
  let drop = async () => {};
  let databaseUrl = opts.databaseUrl;
  if (!databaseUrl) {
    const fresh = freshDatabase(variant, `${dataDir}/account.sqlite`);
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    ACCOUNT_DATABASE_URL: databaseUrl,
    SESSION_SECRET,
    LOG_LEVEL: 'info',
    CRITICAL_RATE_LIMIT_ENABLED: 'false',
    // Servers of concurrent tests must not share rate-limit counters or invalidation channels.
    ...(variant.redisUrl ? { REDIS_URL: variant.redisUrl, REDIS_KEY_PREFIX: `t${process.pid}${Math.random().toString(36).slice(2, 8)}:` } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const log = captureLog();
  const runtime = createRuntime(config, log.stream);
  let built: Awaited<ReturnType<typeof buildAccountApp>>;
  try {
    built = await buildAccountApp(config, runtime, opts.customers);
    await built.app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  } catch (e) {
    // A failed start must not leave a Redis or database connection holding the test process open.
    await runtime.close();
    await drop();
    throw e;
  }
  const { app, ctx, services } = built;
  const addr = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${addr.port}`;
  return {
    url,
    app,
    ctx,
    services,
    log,
    dataDir,
    env,
    browser: () => new Browser(url),
    async createUser(username, password, o = {}) {
      const id = await services.users.insertUser({ username, password, email: o.email ?? null, role: o.role ?? ROLE.user });
      return id;
    },
    async close() {
      await app.close();
      await runtime.close();
      if (!opts.databaseUrl) await drop();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Two account instances on one fresh PostgreSQL schema of the variant, as two processes behind a balancer;
 * close() closes both and drops the schema.
 */
export async function startTwoAccounts(variant: Variant, env: Record<string, string> = {}) {
  const schema = freshSchema(variant.postgresUrl!);
  const a = await startAccount(variant, { databaseUrl: schema.url, env });
  const b = await startAccount(variant, { databaseUrl: schema.url, env }).catch(async (e) => {
    await a.close();
    throw e;
  });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await schema.drop();
    },
  };
}
