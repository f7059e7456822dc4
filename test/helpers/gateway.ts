import fs from 'node:fs';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { buildGatewayApp } from '../../src/gateway/app.js';
import type { Role } from '../../src/gateway/staff/service.js';
import type { EdgeAdminHolder } from '../../src/contract/edge-admin.js';
import { captureLog } from './log-capture.js';
import { readReply } from './http.js';
import { freshDatabase, tempDir, type Variant } from './services.js';

export interface Reply {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

/** A bearer-token client; every response text is kept so tests can grep them all for secrets. */
export class StaffClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
    private readonly transcript: string[],
  ) {}

  async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const h: Record<string, string> = { ...headers };
    if (this.token) h.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const reply = await readReply(await fetch(this.baseUrl + path, { method, headers: h, body: payload }), method);
    this.transcript.push(reply.text);
    return reply;
  }
  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, undefined, headers);
  }
  post(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request('POST', path, body ?? {}, headers);
  }
  put(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request('PUT', path, body ?? {}, headers);
  }
  delete(path: string, headers?: Record<string, string>) {
    return this.request('DELETE', path, undefined, headers);
  }
}

export type GatewayServer = Awaited<ReturnType<typeof startGateway>>;

/** Starts a real gateway listener on 127.0.0.1 (random port) on the variant's database. */
export async function startGateway(variant: Variant, opts: { env?: Record<string, string>; shareWith?: { dataDir: string; databaseUrl: string }; edgeAdmin?: EdgeAdminHolder } = {}) {
  // A second instance on the first one's database (and data directory, so the same sealing key); the
  // first one owns both and removes them.
  const owner = !opts.shareWith;
  const dataDir = opts.shareWith?.dataDir ?? tempDir('gw-test-');
  let drop = async () => {};
  let databaseUrl = opts.shareWith?.databaseUrl ?? '';
  if (owner) {
    const fresh = freshDatabase(variant, `${dataDir}/gateway.sqlite`);
    databaseUrl = fresh.url;
    drop = fresh.drop;
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    GATEWAY_DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'debug',
    // No periodic model-update job in tests unless a test asks for one.
    GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0',
    ...(variant.redisUrl ? { REDIS_URL: variant.redisUrl } : {}),
    ...opts.env,
  });
  const log = captureLog();
  const runtime = createRuntime(config, log.stream);
  const { app, ctx, services, relay } = await buildGatewayApp(config, runtime, { edgeAdmin: opts.edgeAdmin });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const transcript: string[] = [];
  return {
    url,
    app,
    ctx,
    services,
    relay,
    log,
    dataDir,
    databaseUrl,
    transcript,
    anonymous: () => new StaffClient(url, null, transcript),
    client: (token: string) => new StaffClient(url, token, transcript),
    /** Creates an identity and returns a client holding a fresh token for it. */
    async staff(name: string, role: Role, opts: { grant?: string[]; deny?: string[] } = {}) {
      await services.staff.create(name, role, role === 'service' ? opts.grant ?? [] : []);
      if (role !== 'service') for (const p of opts.grant ?? []) await services.staff.setPermission(name, p, 'grant');
      for (const p of opts.deny ?? []) await services.staff.setPermission(name, p, 'deny');
      const { token } = await services.staff.issueToken(name);
      return new StaffClient(url, token, transcript);
    },
    /** Everything the server said: all responses plus the whole log. */
    everything: () => transcript.join('\n') + '\n' + log.text(),
    async close() {
      await app.close();
      await runtime.close();
      await drop();
      if (owner) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
