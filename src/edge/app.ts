import type { Config } from '../config/index.js';
import { migrate, openDatabase } from '../kit/db/index.js';
import { createHttpApp } from '../kit/http/app.js';
import { installOpsEndpoints } from '../kit/http/ops-endpoints.js';
import { createUpstreamClient } from '../kit/upstream/client.js';
import { errorCatalog } from '../contract/errors/index.js';
import { placeholderOperations } from '../contract/coverage.js';
import { operationsOf, registerOperations } from '../contract/registry.js';
import { buildOpenApi } from '../contract/openapi.js';
import type { OperationImpl } from '../contract/types.js';
import type { Runtime } from '../runtime.js';
import type { EdgeDB } from './db.js';
import { edgeMigrations } from './migrations/index.js';
import { edgeSecretKey, type EdgeContext } from './context.js';
import { edgeAuthenticator } from './auth.js';
import { renderEdgeError } from './errors.js';
import { KeyService } from './keys/service.js';
import { AdmissionService } from './admission/service.js';
import { admissionRoutes } from './admission/routes.js';
import { WebhookService } from './webhooks/service.js';
import { Dispatcher } from './webhooks/dispatcher.js';
import type { RelayPort } from '../contract/relay.js';
import { memoryInFlight, redisInFlight } from '../kit/ratelimit/inflight.js';
import { relayFor } from './relay/port.js';
import { SyncCalls } from './calls/service.js';
import { openaiRoutes } from './openai/routes.js';
import { modelRoutes } from './models/routes.js';
import { anthropicRoutes } from './anthropic/routes.js';
import { geminiRoutes } from './gemini/routes.js';
import { mediaRoutes } from './openai/media-routes.js';
import { runRoutes } from './runs/routes.js';
import { RunWorker } from './runs/worker.js';
import { EdgeMetrics } from './metrics.js';
import { LedgerWriter } from './runs/ledger.js';
import { EdgeAdmin } from './admin/service.js';
import { createCustomerPort } from './customers/port.js';
import { customerApiRoutes } from './customers/internal/routes.js';
import { playgroundRoutes } from './customers/internal/playground.js';
import { customerApiAuthenticator } from './customers/internal/workload.js';
import { installCors } from './cors.js';

/** Opens the edge database (migrated) and builds its services; used by the app, the dispatcher and the CLI. */
export async function createEdgeContext(config: Config, runtime: Runtime, inProcessRelay?: RelayPort | null) {
  const database = await openDatabase<EdgeDB>(config.edge.databaseUrl);
  try {
    await migrate(database, 'edge', edgeMigrations(database.dialect));
  } catch (e) {
    await database.close();
    throw e;
  }
  const log = runtime.log.child({ deployable: 'edge' });
  const metrics = new EdgeMetrics(database.db, log);
  const ctx: EdgeContext = {
    config,
    database,
    db: database.db,
    log,
    secretKey: edgeSecretKey(config),
    upstream: createUpstreamClient({
      policy: { allowPrivate: config.edge.webhook.allowPrivate, allow: [] },
      timeoutMs: config.edge.webhook.timeoutMs,
      // A receiver's answer is not used beyond its status: read at most 64 KiB of it.
      maxBytes: 64 * 1024,
    }),
    metrics,
    ledger: new LedgerWriter(database, metrics),
  };
  const { relay, configured } = relayFor(config, inProcessRelay);
  if (!configured && config.services.includes('edge')) ctx.log.warn('edge: no gateway relay (run the gateway in the same process, or set EDGE_RELAY_URL and EDGE_RELAY_TOKEN_KEY): calls answer 503');
  const inFlight = runtime.redis ? redisInFlight(runtime.redis, `${config.redisKeyPrefix}edge:inflight:`) : memoryInFlight();
  const keys = new KeyService(ctx);
  const webhooks = new WebhookService(ctx);
  const calls = new SyncCalls(ctx, relay, inFlight);
  const limiter = runtime.limiter('edge:');
  const services = {
    keys,
    admission: new AdmissionService(ctx, relay),
    webhooks,
    calls,
    limiter,
    relay,
    relayConfigured: configured,
    /** Models, keys, wallets, usage and webhooks: the CLI's and (as EdgeAdminPort) the gateway console's. */
    admin: new EdgeAdmin(ctx, keys, webhooks, configured),
    /** An account user's keys, wallet, usage, top-up codes and playground chat (CustomerPort): the account service's. */
    customers: createCustomerPort(ctx, relay, calls, limiter),
  };
  const close = async () => {
    await ctx.ledger.close();
    await ctx.upstream.close();
    await ctx.database.close();
  };
  return { ctx, services, close };
}

type Services = Awaited<ReturnType<typeof createEdgeContext>>['services'];

function routesOf(ctx: EdgeContext, services: Services): OperationImpl<any>[] {
  return [
    ...admissionRoutes(ctx, services.admission, services.calls),
    ...runRoutes(ctx),
    ...openaiRoutes(ctx, services.calls),
    ...modelRoutes(ctx),
    ...anthropicRoutes(ctx, services.calls),
    ...geminiRoutes(ctx, services.calls),
    ...mediaRoutes(ctx, services.calls),
    ...customerApiRoutes(services.customers),
    ...playgroundRoutes(ctx, services.customers),
  ];
}

/** Builds the edge deployable (SPEC's archived machine-facing public API) on its own database. */
export async function buildEdgeApp(config: Config, runtime: Runtime, inProcessRelay?: RelayPort | null) {
  const { ctx, services, close } = await createEdgeContext(config, runtime, inProcessRelay);
  const app = createHttpApp({ logger: ctx.log, trustProxy: config.trustProxy, bodyLimit: config.bodyLimitBytes, maxJsonDepth: config.bodyMaxDepth, catalog: errorCatalog, renderError: renderEdgeError, ownRequestIds: true });
  app.decorate('edge', ctx);
  installCors(app);
  let registered: ReturnType<typeof registerOperations>;
  try {
    registered = registerOperations(app, {
      deployable: 'edge',
      implementations: routesOf(ctx, services),
      authenticate: edgeAuthenticator(services.keys, services.limiter, config.edge.rateLimitPerMinute, customerApiAuthenticator(config)),
      enabledOperations: [],
      rateLimits: {},
      extra: placeholderOperations(),
    });
  } catch (e) {
    await app.close();
    await close();
    throw e;
  }
  const registry = installOpsEndpoints(app, {
    name: 'edge',
    access: { token: config.opsToken, behindProxy: config.trustProxy },
    readiness: { database: () => ctx.database.ping() },
    openapi: () => buildOpenApi('Edge API', registered),
  });
  ctx.metrics.register(registry);
  const dispatcher = config.edge.dispatcher.enabled ? new Dispatcher(ctx) : null;
  dispatcher?.start();
  const worker = config.edge.runs.worker && services.relayConfigured ? new RunWorker(ctx, services.relay) : null;
  worker?.start();
  app.addHook('onClose', async () => {
    await worker?.stop();
    await dispatcher?.stop();
    await close();
  });
  return { app, ctx, services, dispatcher, worker, admin: services.admin, customers: services.customers };
}

/** The manifest view of the edge: E01 and the placeholder routes (no database needed). */
export function edgeOperations() {
  const none = null as unknown as EdgeContext;
  const fake = { keys: null, admission: null, webhooks: null, calls: null } as never;
  return [...operationsOf('edge', routesOf(none, fake)), ...placeholderOperations()];
}
