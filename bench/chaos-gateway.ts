/**
 * The gateway of the chaos bench (bench/chaos.ts), in its own process: SQLite in BENCH_DIR, the relay's
 * internal API on with the HS256 key BENCH_RELAY_SECRET, loopback upstreams allowed. Five channels (staff API,
 * G02), one per upstream of the chaos fake BENCH_UPSTREAM_URL (/u1 … /u5), all serving `gpt-4o-mini` at
 * the same priority and weight (the relay's weighted random order); `auto_ban` 1, so their breakers act.
 * Relay settings: the defaults (breakers: 5 counted failures in 60 s, 30 s cooldown, 1 probe; backoff 50 ms
 * to 1 s) except the first-byte and idle deadlines, BENCH_CHAOS_DEADLINE_MS (as Portkey's request_timeout),
 * and GATEWAY_RETRY_TIMES 4 (a call may try all five channels, as Portkey's fallback tries its five targets).
 * Reports {url} over IPC when listening.
 */
import fs from 'node:fs';

const upstream = process.env.BENCH_UPSTREAM_URL!;
const secret = process.env.BENCH_RELAY_SECRET!;
const dataDir = process.env.BENCH_DIR!;
const deadline = process.env.BENCH_CHAOS_DEADLINE_MS ?? '1000';

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
    GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: deadline,
    GATEWAY_RELAY_IDLE_TIMEOUT_MS: deadline,
    GATEWAY_RETRY_TIMES: '4',
  });
  // The request log is written as in production, to /dev/null.
  const runtime = createRuntime(config, fs.createWriteStream('/dev/null') as never);
  const { app, services } = await buildGatewayApp(config, runtime);
  await services.staff.create('bench-root', 'root');
  const { token } = await services.staff.issueToken('bench-root');
  await services.ratios.setCurrent({ model_ratio: { 'gpt-4o-mini': 0.075 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  for (const name of ['u1', 'u2', 'u3', 'u4', 'u5']) {
    const channel = { type: 1, name: `chaos-${name}`, base_url: `${upstream}/${name}`, models: 'gpt-4o-mini', key: 'sk-bench-chaos-key', group: 'default', auto_ban: 1 };
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
