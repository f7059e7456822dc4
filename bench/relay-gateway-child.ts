/**
 * A bench gateway in its own process (bench/relay-gateway.ts, bench/chaos-gateway.ts): SQLite in BENCH_DIR, the
 * relay's internal API on with the HS256 key BENCH_RELAY_SECRET, loopback upstreams allowed, the request log
 * written as in production to /dev/null. A root staff member creates the channels through the staff API (G02)
 * and the models are priced; reports {url} over IPC when listening and stops on 'stop' or a disconnect.
 */
import fs from 'node:fs';

export interface BenchGateway {
  /** Environment beyond the common one (deadlines, retries). */
  env?: Record<string, string>;
  /** model_ratio of the ratio configuration. */
  modelRatios: Record<string, number>;
  channels: Array<Record<string, unknown>>;
}

export function serveRelayGateway(spec: BenchGateway) {
  serve(spec).catch((e) => {
    process.send?.({ error: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  });
}

async function serve(spec: BenchGateway) {
  const { loadConfig } = await import('../src/config/index.js');
  const { createRuntime } = await import('../src/runtime.js');
  const { buildGatewayApp } = await import('../src/gateway/app.js');
  const config = loadConfig({
    DATA_DIR: process.env.BENCH_DIR!,
    LOG_LEVEL: 'info',
    GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0',
    GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
    GATEWAY_RELAY_TOKEN_SECRET: process.env.BENCH_RELAY_SECRET!,
    ...spec.env,
  });
  const runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
  const { app, services } = await buildGatewayApp(config, runtime);
  await services.staff.create('bench-root', 'root');
  const { token } = await services.staff.issueToken('bench-root');
  await services.ratios.setCurrent({ model_ratio: spec.modelRatios });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  for (const channel of spec.channels) {
    const res = await fetch(`${url}/api/channel/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'single', channel: { type: 1, group: 'default', ...channel } }),
    });
    if (res.status !== 200) throw new Error(`creating channel ${channel.name} answered ${res.status}: ${await res.text()}`);
  }
  const stop = async () => {
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('message', (m) => m === 'stop' && void stop());
  process.on('disconnect', () => void stop());
  process.send!({ url });
}
