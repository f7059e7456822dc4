import { ConfigError, loadConfig, type Config } from './config/index.js';
import { createRuntime } from './runtime.js';
import { buildAccountApp } from './account/app.js';
import { buildGatewayApp } from './gateway/app.js';
import { buildEdgeApp } from './edge/app.js';
import type { FastifyInstance } from 'fastify';
import type { RelayPort } from './contract/relay.js';
import type { EdgeAdminHolder } from './contract/edge-admin.js';

async function start(config: Config) {
  const runtime = createRuntime(config);
  const apps: FastifyInstance[] = [];
  const listeners = { account: config.account, gateway: config.gateway, edge: config.edge } as const;
  // The edge uses the gateway's relay in process when both run here (else over the gateway's internal API).
  let relay: RelayPort | null = null;
  // The gateway console manages the edge through its port when both run here (filled once the edge is built).
  const edgeAdmin: EdgeAdminHolder = { port: null };
  for (const service of [...config.services].sort((a, b) => Number(a === 'edge') - Number(b === 'edge'))) {
    let app: FastifyInstance;
    if (service === 'gateway') {
      const gateway = await buildGatewayApp(config, runtime, { edgeAdmin });
      relay = gateway.relay.engine;
      app = gateway.app;
    } else {
      if (service === 'edge') {
        const edge = await buildEdgeApp(config, runtime, relay);
        edgeAdmin.port = edge.admin;
        app = edge.app;
      } else app = (await buildAccountApp(config, runtime)).app;
    }
    if (service === 'edge') runtime.log.info({ admissionMode: config.edge.admissionMode }, `edge: PUBLIC_ADMISSION_MODE=${config.edge.admissionMode}`);
    const { host, port } = listeners[service];
    await app.listen({ host, port });
    runtime.log.info({ service, host, port }, `${service} listening on http://${host}:${port}`);
    apps.push(app);
  }
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
