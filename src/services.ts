import type { FastifyInstance } from 'fastify';
import type { Config, ServiceName } from './config/index.js';
import type { Runtime } from './runtime.js';
import type { RelayPort } from './contract/relay.js';
import type { EdgeAdminHolder } from './contract/edge-admin.js';
import type { CustomerHolder } from './contract/customer.js';
import { buildAccountApp } from './account/app.js';
import { buildGatewayApp } from './gateway/app.js';
import { buildEdgeApp } from './edge/app.js';
import { remoteCustomerPort } from './account/customers/http-port.js';

/**
 * Builds the app of every service in SERVICES (databases opened and migrated), the edge last: it uses the
 * gateway's relay in process when both run here (else over the gateway's internal API), the gateway
 * console manages the edge through its port, and the account's customer API reaches the edge's customer port
 * (in process, or over the edge's internal API at ACCOUNT_EDGE_URL when the edge runs elsewhere).
 */
export async function buildServices(config: Config, runtime: Runtime): Promise<{ service: ServiceName; app: FastifyInstance }[]> {
  let relay: RelayPort | null = null;
  const edgeAdmin: EdgeAdminHolder = { port: null };
  // The account is built before the edge: its customer API reaches the edge through this holder, filled once
  // the edge is built here, or at once with the HTTP port when the edge runs in another process.
  const apart = config.services.includes('account') && !config.services.includes('edge');
  const customers: CustomerHolder = { port: apart ? remoteCustomerPort(config, runtime.log.child({ deployable: 'account' })) : null };
  const built: { service: ServiceName; app: FastifyInstance }[] = [];
  try {
    for (const service of [...config.services].sort((a, b) => Number(a === 'edge') - Number(b === 'edge'))) {
      if (service === 'gateway') {
        const gateway = await buildGatewayApp(config, runtime, { edgeAdmin });
        relay = gateway.relay.engine;
        built.push({ service, app: gateway.app });
      } else if (service === 'edge') {
        const edge = await buildEdgeApp(config, runtime, relay);
        edgeAdmin.port = edge.admin;
        customers.port = edge.customers;
        built.push({ service, app: edge.app });
      } else built.push({ service, app: (await buildAccountApp(config, runtime, customers)).app });
    }
  } catch (e) {
    await Promise.allSettled(built.map((b) => b.app.close()));
    throw e;
  }
  return built;
}
