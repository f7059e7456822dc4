import type { Config } from '../config/index.js';
import { migrate, openDatabase } from '../kit/db/index.js';
import { createHttpApp } from '../kit/http/app.js';
import { installOpsEndpoints } from '../kit/http/ops-endpoints.js';
import { errorCatalog } from '../contract/errors/index.js';
import { operationsOf, registerOperations } from '../contract/registry.js';
import { buildOpenApi } from '../contract/openapi.js';
import type { OperationImpl } from '../contract/types.js';
import type { Runtime } from '../runtime.js';
import type { GatewayDB } from './db.js';
import { gatewayMigrations } from './migrations/index.js';

export const gatewayRoutes: OperationImpl<any>[] = [];

/** Builds the gateway deployable on its own database. */
export async function buildGatewayApp(config: Config, runtime: Runtime) {
  const database = await openDatabase<GatewayDB>(config.gateway.databaseUrl);
  await migrate(database, 'gateway', gatewayMigrations(database.dialect));
  const log = runtime.log.child({ deployable: 'gateway' });
  const app = createHttpApp({ logger: log, trustProxy: config.trustProxy, bodyLimit: config.bodyLimitBytes, catalog: errorCatalog });
  const registered = registerOperations(app, {
    deployable: 'gateway',
    implementations: gatewayRoutes,
    // Staff identities arrive with the gateway core; until then every operation is planned (501).
    authenticate: async () => {},
    enabledOperations: config.enabledOperations.filter((id) => id.startsWith('G')),
    rateLimits: {},
  });
  installOpsEndpoints(app, {
    name: 'gateway',
    readiness: { database: () => database.ping() },
    openapi: () => buildOpenApi('Gateway API', registered),
  });
  app.addHook('onClose', async () => database.close());
  return { app, database };
}

export function gatewayOperations() {
  return operationsOf('gateway', gatewayRoutes);
}
