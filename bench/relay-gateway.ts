/**
 * The gateway of the relay bench (bench/relay.ts), in its own process: SQLite in BENCH_DIR, the relay's
 * internal API on with the HS256 key BENCH_RELAY_SECRET, loopback upstreams allowed. Two channels (staff
 * API, G02) point at the fake upstream BENCH_UPSTREAM_URL: `gpt-4o-mini` at its root, `bench-paced` under
 * /paced (chunks one every 100 ms); both models are priced. Reports {url} over IPC when listening.
 */
import fs from 'node:fs';

const upstream = process.env.BENCH_UPSTREAM_URL!;
const secret = process.env.BENCH_RELAY_SECRET!;
const dataDir = process.env.BENCH_DIR!;

async function main() {
  const { loadConfig } = await import('../src/config/index.js');
  const { createRuntime } = await import('../src/runtime.js');
  const { buildGatewayApp } = await import('../src/gateway/app.js');
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0',
    GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1',
    GATEWAY_RELAY_TOKEN_SECRET: secret,
  });
  // The request log is written as in production, to /dev/null.
  const runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
  const { app, services } = await buildGatewayApp(config, runtime);
  await services.staff.create('bench-root', 'root');
  const { token } = await services.staff.issueToken('bench-root');
  await services.ratios.setCurrent({ model_ratio: { 'gpt-4o-mini': 0.075, 'bench-paced': 0.075 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  for (const [name, base, model] of [['bench-fake', upstream, 'gpt-4o-mini'], ['bench-paced', `${upstream}/paced`, 'bench-paced']]) {
    const channel = { type: 1, name, base_url: base, models: model, key: 'sk-bench-relay-key', group: 'default' };
    const res = await fetch(`${url}/api/channel/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'single', channel }),
    });
    if (res.status !== 200) throw new Error(`creating channel ${name} answered ${res.status}: ${await res.text()}`);
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

main().catch((e) => {
  process.send?.({ error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
