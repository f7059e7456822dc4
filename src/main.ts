import { loadConfig, type Config } from './config/index.js';
import { ConfigError } from './config/read.js';
import { createRuntime } from './runtime.js';
import { buildServices } from './services.js';

async function start(config: Config) {
  const runtime = createRuntime(config);
  const listeners = { account: config.account, gateway: config.gateway, edge: config.edge } as const;
  const built = await buildServices(config, runtime);
  for (const { service, app } of built) {
    if (service === 'edge') runtime.log.info({ admissionMode: config.edge.admissionMode }, `edge: PUBLIC_ADMISSION_MODE=${config.edge.admissionMode}`);
    const { host, port } = listeners[service];
    await app.listen({ host, port });
    runtime.log.info({ service, host, port }, `${service} listening on http://${host}:${port}`);
  }
  const apps = built.map((b) => b.app);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.log.info({ signal }, 'shutting down');
    await Promise.allSettled(apps.map((a) => a.close()));
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    console.error(`configuration error: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
start(config).catch((e) => {
  console.error(`start-up failed: ${(e as Error).message}`);
  process.exit(1);
});
