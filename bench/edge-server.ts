/**
 * The edge of the edge bench (bench/edge.ts), in its own process; the request log goes to /dev/null (written
 * as in production, not read back). Two shapes, by BENCH_EDGE_MODE:
 *   admission  the edge alone (SERVICES=edge) on EDGE_DATABASE_URL, which bench/edge.ts made beforehand from
 *              the edge's migrations with the model, owners, keys and wallets; no relay, so no run worker:
 *              what is measured is E01's admission only
 *   e2e        the gateway and the edge in one process (SERVICES=gateway,edge, as src/main.ts co-hosts them),
 *              SQLite in BENCH_DIR: a gateway channel (created through the staff API, as bench/relay-gateway.ts
 *              does) to the fake upstream BENCH_UPSTREAM_URL, `gpt-4o-mini` priced, the edge using the
 *              gateway's relay in process; the public model `gpt-4o-mini`, one owner with a key (issued by
 *              the key service) and a credited wallet; reports {url, token}. With EDGE_DATABASE_URL the
 *              edge uses that database instead, which the bench made beforehand (model, owners, keys,
 *              wallets: bench/edge-db.ts), and nothing is added to it; several processes may share it
 *   fastify    no database: the kit's HTTP app as the edge builds it (createHttpApp with the edge's options and
 *              error renderer, its request id, request log and metrics hooks) with one trivial route
 *              `POST /v1/chat/completions` (a JSON body schema of the chat's shape) answering a fixed chat
 *              completion, and beside it in the same process a node:http server that parses the same body
 *              and answers the same bytes; reports {url (Fastify), httpUrl}
 * PUBLIC_ADMISSION_MODE=controlled, the per-key rate limit and the per-owner call cap at their maximum (one
 * key carries the whole load). Reports {url} over IPC when listening; stops on "stop" or when the parent goes.
 */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';

const mode = process.env.BENCH_EDGE_MODE;

async function main() {
  const { loadConfig } = await import('../src/config/index.js');
  const { createRuntime } = await import('../src/runtime.js');
  const { buildEdgeApp } = await import('../src/edge/app.js');
  const common = {
    LOG_LEVEL: 'info',
    PUBLIC_ADMISSION_MODE: 'controlled',
    EDGE_RATE_LIMIT_PER_MINUTE: '1000000',
    EDGE_OWNER_CONCURRENCY: '100000',
  };
  const apps: FastifyInstance[] = [];
  const report: Record<string, unknown> = {};
  let runtime: ReturnType<typeof createRuntime>;
  if (mode === 'admission') {
    const config = loadConfig({ ...common, SERVICES: 'edge', DATA_DIR: process.env.BENCH_DIR!, EDGE_DATABASE_URL: process.env.EDGE_DATABASE_URL! });
    runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
    apps.push((await buildEdgeApp(config, runtime, null)).app);
  } else if (mode === 'fastify') {
    const config = loadConfig({ ...common, SERVICES: 'edge', DATA_DIR: process.env.BENCH_DIR! });
    runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
    const { fastifyCycle } = await import('./edge-fastify.js');
    const cycle = await fastifyCycle(config, runtime);
    apps.push(cycle.app);
    report.httpUrl = cycle.httpUrl;
  } else if (mode === 'e2e') {
    const { buildGatewayApp } = await import('../src/gateway/app.js');
    const { setModel } = await import('../src/edge/models/store.js');
    const { credit } = await import('../src/edge/wallets/store.js');
    const prepared = process.env.EDGE_DATABASE_URL;
    const config = loadConfig({
      ...common,
      ...(prepared ? { EDGE_DATABASE_URL: prepared } : {}),
      SERVICES: 'gateway,edge',
      DATA_DIR: process.env.BENCH_DIR!,
      GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0',
      GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
    });
    runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
    const gateway = await buildGatewayApp(config, runtime);
    const { services } = gateway;
    await services.staff.create('bench-root', 'root');
    const { token: staffToken } = await services.staff.issueToken('bench-root');
    await services.ratios.setCurrent({ model_ratio: { 'gpt-4o-mini': 0.075 } });
    await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    const gatewayUrl = `http://127.0.0.1:${(gateway.app.server.address() as { port: number }).port}`;
    const channel = { type: 1, name: 'bench-fake', base_url: process.env.BENCH_UPSTREAM_URL!, models: 'gpt-4o-mini', key: 'sk-bench-relay-key', group: 'default' };
    const res = await fetch(`${gatewayUrl}/api/channel/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${staffToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'single', channel }),
    });
    if (res.status !== 200) throw new Error(`creating the channel answered ${res.status}: ${await res.text()}`);
    apps.push(gateway.app);
    const edge = await buildEdgeApp(config, runtime, gateway.relay.engine);
    apps.push(edge.app);
    if (prepared) return listen(apps, runtime, report);
    await setModel(edge.ctx.db, 'gpt-4o-mini', { reserveAmount: 100, enabled: true, gatewayModel: null, group: 'default', overdraft: 0 });
    const key = await edge.services.keys.issue('bench-e2e');
    await credit(edge.ctx.db, (await edge.services.keys.authenticate(key.token))!.ownerId, 1e15);
    report.token = key.token;
  } else {
    throw new Error(`BENCH_EDGE_MODE must be admission, e2e or fastify, not ${String(mode)}`);
  }
  await listen(apps, runtime, report);
}

/** Listens with the last app (the edge's), reports its url and what else the mode reported, stops on "stop". */
async function listen(apps: FastifyInstance[], runtime: { close(): Promise<void> }, report: Record<string, unknown>) {
  const edgeApp = apps.at(-1)!;
  await edgeApp.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(edgeApp.server.address() as { port: number }).port}`;
  const stop = async () => {
    for (const app of apps.reverse()) await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('message', (m) => m === 'stop' && void stop());
  process.on('disconnect', () => void stop());
  process.send!({ url, ...report });
}

main().catch((e) => {
  process.send?.({ error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
