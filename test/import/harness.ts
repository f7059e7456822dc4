import fs from 'node:fs';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { registerImportCommands } from '../../src/import/cli.js';
import { runCli } from '../helpers/cli.js';
import { createGatewayContext } from '../../src/gateway/app.js';
import { createEdgeContext } from '../../src/edge/app.js';
import { freshDatabase, type Variant } from '../helpers/services.js';
import { SESSION_SECRET, type AccountServer } from '../helpers/account.js';
import { createNewApiDb, type NewApiDb } from './new-api-source.js';

export const ORIGIN = 'http://localhost:5173';
export const PASSKEY_ENV = { PASSKEY_ENABLED: 'true', PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: ORIGIN };

/** A new-api database, a gateway database and an edge database for one test server, on the variant's engine. */
export async function databases(v: Variant, s: AccountServer) {
  const drops: (() => Promise<void>)[] = [];
  const url = (file: string) => {
    const f = freshDatabase(v, `${s.dataDir}/${file}`);
    drops.push(f.drop);
    return f.url;
  };
  const sourceUrl = url('new-api.db');
  const gatewayUrl = url('gateway.sqlite');
  const edgeUrl = url('edge.sqlite');
  const source: NewApiDb = await createNewApiDb(sourceUrl);
  return {
    source,
    sourceUrl,
    gatewayUrl,
    edgeUrl,
    /** The --from argument: a bare path for SQLite (as operators type it), the URL for PostgreSQL. */
    from: v.name === 'sqlite' ? `${s.dataDir}/new-api.db` : sourceUrl,
    async close() {
      await source.database.close();
      for (const d of drops) await d();
    },
  };
}

/** Where the gateway and edge parts write (the edge: DATA_DIR/edge.sqlite when absent). */
export interface Targets {
  gatewayUrl: string;
  edgeUrl?: string;
}

/** Runs `import new-api …` in this process against the server's account database and the targets. */
export async function importCli(s: AccountServer, to: Targets, ...args: string[]) {
  const env: Record<string, string> = { DATA_DIR: s.dataDir, ACCOUNT_DATABASE_URL: s.ctx.config.account.databaseUrl, GATEWAY_DATABASE_URL: to.gatewayUrl, SESSION_SECRET, PASSKEY_RP_ID: 'localhost' };
  if (to.edgeUrl) env.EDGE_DATABASE_URL = to.edgeUrl;
  const r = await runCli(registerImportCommands, env, ['import', 'new-api', ...args]);
  return { text: r.lines.join('\n'), error: r.error };
}

/** Opens the gateway database as the gateway would (sealing key from DATA_DIR), for reading in a test. */
export async function openGateway(s: AccountServer, gatewayUrl: string) {
  const config = loadConfig({ DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: gatewayUrl, LOG_LEVEL: 'warn' });
  const runtime = createRuntime(config, { write: () => {} });
  const g = await createGatewayContext(config, runtime);
  return {
    ...g,
    async close() {
      await g.ctx.upstream.close();
      await g.ctx.database.close();
      await runtime.close();
    },
  };
}

/** Opens the edge database as the edge would, for reading in a test. */
export async function openEdge(s: AccountServer, edgeUrl: string) {
  const config = loadConfig({ DATA_DIR: s.dataDir, EDGE_DATABASE_URL: edgeUrl, LOG_LEVEL: 'warn' });
  const runtime = createRuntime(config, { write: () => {} });
  const e = await createEdgeContext(config, runtime);
  return {
    ...e,
    db: e.ctx.db,
    async close() {
      await e.close();
      await runtime.close();
    },
  };
}

/** One line of the report for a table, e.g. "users: read 8, imported 3, …". */
export function line(report: string, table: string): string {
  return report.split('\n').find((l) => l.startsWith(`${table}:`)) ?? '';
}

export function fileExists(p: string) {
  return fs.existsSync(p);
}
