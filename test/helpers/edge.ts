import crypto from 'node:crypto';
import fs from 'node:fs';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { buildEdgeApp } from '../../src/edge/app.js';
import type { RelayPort } from '../../src/contract/relay.js';
import { registerEdgeCommands } from '../../src/edge/cli.js';
import type { EdgeDB } from '../../src/edge/db.js';
import { importedKeyId, maskedKey } from '../../src/edge/keys/credentials.js';
import type { Kysely } from 'kysely';
import { runCli } from './cli.js';
import { captureLog } from './log-capture.js';
import { readReply } from './http.js';
import { freshDatabase, tempDir, type Variant } from './services.js';

export interface EdgeReply {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

export type EdgeServer = Awaited<ReturnType<typeof startEdge>>;

/**
 * Starts a real edge listener on 127.0.0.1 (random port) on the variant's database, admission controlled
 * and no in-process dispatcher unless the test asks (env).
 */
export async function startEdge(variant: Variant, opts: { env?: Record<string, string>; relay?: RelayPort; shareWith?: { dataDir: string; databaseUrl: string } } = {}) {
  // A second instance on the first one's database and data directory; the first one owns both.
  const owner = !opts.shareWith;
  const dataDir = opts.shareWith?.dataDir ?? tempDir('edge-test-');
  const { url: databaseUrl, drop } = opts.shareWith ? { url: opts.shareWith.databaseUrl, drop: async () => {} } : freshDatabase(variant, `${dataDir}/edge.sqlite`);
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    EDGE_DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'debug',
    PUBLIC_ADMISSION_MODE: 'controlled',
    EDGE_DISPATCHER: 'false',
    // Runs are executed by the test (worker.tick()) unless it asks for a polling worker.
    EDGE_RUN_POLL_MS: '60000',
    EDGE_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...(variant.redisUrl ? { REDIS_URL: variant.redisUrl, REDIS_KEY_PREFIX: `t${Math.random().toString(36).slice(2)}:` } : {}),
    ...opts.env,
  };
  const config = loadConfig(env);
  const log = captureLog();
  const runtime = createRuntime(config, log.stream);
  const { app, ctx, services, dispatcher, worker } = await buildEdgeApp(config, runtime, opts.relay);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const transcript: string[] = [];
  const cliOutput: string[] = [];

  async function request(method: string, path: string, o: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<EdgeReply> {
    const h: Record<string, string> = { ...o.headers };
    if (o.token) h.authorization = `Bearer ${o.token}`;
    let payload = o.raw;
    if (o.body !== undefined) payload = JSON.stringify(o.body);
    if (payload !== undefined) h['content-type'] ??= 'application/json';
    const reply = await readReply(await fetch(url + path, { method, headers: h, body: payload }), method);
    transcript.push(reply.text);
    return reply;
  }

  /** Runs edge CLI commands in this process on their own database connection; stdout lines and the error. */
  async function cli(...args: string[]) {
    const r = await runCli(registerEdgeCommands, env, args);
    cliOutput.push(...r.lines);
    return r;
  }

  return {
    url,
    app,
    ctx,
    services,
    dispatcher,
    worker,
    databaseUrl,
    log,
    env,
    dataDir,
    transcript,
    request,
    cli,
    /** Issues a key for `owner` through the CLI and returns the token (its last stdout line). */
    async issueKey(owner: string) {
      const r = await cli('edge', 'key', 'issue', '--owner', owner);
      if (r.error) throw new Error(r.error);
      return r.lines.at(-1)!;
    },
    respond(token: string, body: unknown, headers: Record<string, string> = {}) {
      return request('POST', '/v1/responses', { token, body, headers });
    },
    /** Everything the server said: responses and the whole log (not the CLI's one-time prints). */
    everything: () => transcript.join('\n') + '\n' + log.text(),
    async close() {
      await app.close();
      await runtime.close();
      await drop();
      if (owner) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A new-api key (sk- and 48 letters or digits) written straight into the edge's database with its token, as the
 * importer leaves one: its key row (id derived from the key, SHA-256 of the whole key) and an enabled token that
 * never expires, with `token`'s fields over those defaults.
 */
export async function insertImportedKey(db: Kysely<EdgeDB>, ownerId: number, token: { name: string; remain_quota: number; unlimited_quota: number }) {
  const key = `sk-${crypto.randomBytes(36).toString('base64').replace(/[^A-Za-z0-9]/g, '').padEnd(48, 'x').slice(0, 48)}`;
  const keyId = importedKeyId(key);
  await db.insertInto('edge_keys').values({ key_id: keyId, owner_id: ownerId, secret_hash: crypto.createHash('sha256').update(key).digest('hex'), created_at: 1, revoked_at: null }).execute();
  await db
    .insertInto('edge_tokens')
    .values({ key_id: keyId, owner_id: ownerId, key_hint: maskedKey(key), status: 1, expired_time: -1, model_limits_enabled: 0, model_limits: '', allow_ips: '', group_name: '', used_quota: 0, accessed_time: 0, created_time: 1, pending_key: null, pending_until: null, deleted_at: null, ...token } as never)
    .execute();
  return { key, keyId };
}
