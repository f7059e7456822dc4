import { ensureRoutingIndex } from './channels/store.js';
import type { Config } from '../config/index.js';
import { migrate, openDatabase, type Database } from '../kit/db/index.js';
import { randomToken } from '../kit/crypto/tokens.js';
import { createHttpApp } from '../kit/http/app.js';
import { installOpsEndpoints } from '../kit/http/ops-endpoints.js';
import { CONSOLE_ROOT, installConsole } from '../kit/http/console.js';
import { errorCatalog } from '../contract/errors/index.js';
import { assertNoRouteConflicts, operationsOf, registerOperations } from '../contract/registry.js';
import { buildOpenApi } from '../contract/openapi.js';
import type { OperationImpl } from '../contract/types.js';
import type { Runtime } from '../runtime.js';
import type { GatewayDB } from './db.js';
import { gatewayMigrations } from './migrations/index.js';
import type { GatewayContext } from './context.js';
import { loadSealingKey } from './sealing.js';
import { gatewayAuthenticator } from './auth.js';
import { StaffService } from './staff/service.js';
import { ProofService } from './staff/proofs.js';
import { staffRoutes } from './staff/routes.js';
import { StaffAdminService } from './staff/admin-service.js';
import { staffAdminRoutes } from './staff/admin-routes.js';
import { ChannelService } from './channels/service.js';
import { channelRoutes, clearCountCache } from './channels/routes.js';
import { channelMoreRoutes } from './channels/more-routes.js';
import { prefillRoutes } from './prefill/routes.js';
import { createUpstreamClient } from '../kit/upstream/client.js';
import { ByteBudget } from '../kit/upstream/budget.js';
import { ModelService } from './models/service.js';
import { modelRoutes } from './models/routes.js';
import { JobService } from './jobs/service.js';
import { jobRoutes } from './jobs/routes.js';
import { UpstreamUpdateService } from './models/updates.js';
import { upstreamUpdateRoutes } from './models/updates-routes.js';
import { ChannelTestService } from './channel-tests/service.js';
import { channelTestRoutes } from './channel-tests/routes.js';
import { BalanceService } from './balance/service.js';
import { balanceRoutes } from './balance/routes.js';
import { LocalModelService } from './localmodels/service.js';
import { localModelRoutes } from './localmodels/routes.js';
import { CoderService } from './coder/service.js';
import { coderRoutes } from './coder/routes.js';
import { AffinityService } from './affinity/service.js';
import { affinityRoutes } from './affinity/routes.js';
import { memoryCache, redisCache } from './affinity/cache.js';
import { RatioSyncService } from './ratio-sync/service.js';
import { ratioSyncRoutes } from './ratio-sync/routes.js';
import { DeploymentService } from './deployments/service.js';
import { deploymentRoutes } from './deployments/routes.js';
import { SettingsService } from './settings/service.js';
import { settingsRoutes } from './settings/routes.js';
import { PluginService } from './plugins/service.js';
import { pluginRoutes } from './plugins/routes.js';
import { activePackages, FACTORY_DIR, scanPlugins } from './plugins/loader.js';
import { defaultEnabled, pluginOperations } from './plugins/runtime.js';
import { createRelay, type Relay } from './relay/index.js';
import { relayRoutes } from './relay/routes.js';
import { renderRelayError } from './relay/errors.js';
import { workloadAuthenticator } from './relay/workload.js';
import { GatewayMetrics } from './metrics.js';
import { EdgeAdminService } from './edge-admin/service.js';
import { edgeAdminRoutes } from './edge-admin/routes.js';
import type { EdgeAdminHolder } from '../contract/edge-admin.js';

/**
 * A random id of this gateway database, so deployments sharing one Redis keep separate rate-limit
 * counters (staff ids repeat across databases).
 */
async function installationId(database: Database<GatewayDB>): Promise<string> {
  const read = () => database.db.selectFrom('gateway_meta').select('value').where('key', '=', 'installation_id').executeTakeFirst();
  const found = await read();
  if (found) return found.value;
  await database.db.insertInto('gateway_meta').values({ key: 'installation_id', value: randomToken(12) }).onConflict((oc) => oc.column('key').doNothing()).execute();
  return (await read())!.value;
}

/** Opens the gateway database (migrated) and builds its services; used by the app and the CLI. */
export async function createGatewayContext(config: Config, runtime: Runtime) {
  // The abilities index runs to millions of rows: SQLite's default 2 MB page cache would make every
  // index insert of a rebuild a page reload. Channel pages, searches and counts run on a read thread.
  const database = await openDatabase<GatewayDB>(config.gateway.databaseUrl, {
    sqliteCacheMb: config.gateway.sqliteCacheMb,
    readThread: config.gateway.sqliteReadThread,
  });
  let secretKey: Buffer;
  try {
    await migrate(database, 'gateway', gatewayMigrations(database.dialect));
    await ensureRoutingIndex(database.db);
    secretKey = await loadSealingKey(config, database.db);
  } catch (e) {
    await database.close();
    throw e;
  }
  const log = runtime.log.child({ deployable: 'gateway' });
  const upstreamBudget = new ByteBudget(config.gateway.upstream.maxBufferedBytes);
  const ctx: GatewayContext = {
    config,
    database,
    db: database.db,
    log,
    secretKey,
    installationId: await installationId(database),
    upstream: createUpstreamClient({
      policy: { allowPrivate: config.gateway.upstream.allowPrivate, allow: config.gateway.upstream.allow },
      timeoutMs: config.gateway.upstream.timeoutMs,
      maxBytes: config.gateway.upstream.maxBytes,
      budget: upstreamBudget,
    }),
    upstreamBudget,
    metrics: new GatewayMetrics(database.db, log, upstreamBudget),
  };
  const channels = new ChannelService(ctx);
  const services = { staff: new StaffService(ctx), proofs: new ProofService(ctx), channels, models: new ModelService(ctx, channels), jobs: new JobService(ctx), plugins: new PluginService(ctx, channels) };
  const updates = new UpstreamUpdateService(ctx, channels, services.models, services.jobs);
  const tests = new ChannelTestService(ctx, channels, services.jobs);
  const balances = new BalanceService(ctx, channels, services.jobs);
  const local = new LocalModelService(ctx, channels);
  const coder = new CoderService(ctx, channels);
  // Shared through Redis when configured (every instance sees one cache), else in this process.
  const affinityCache = runtime.redis ? redisCache(runtime.redis, `${config.redisKeyPrefix}gateway:${ctx.installationId}:`) : memoryCache();
  const affinity = new AffinityService(ctx, affinityCache);
  const ratios = new RatioSyncService(ctx, channels);
  const deployments = new DeploymentService(ctx);
  const settings = new SettingsService(ctx, ratios, deployments, affinity);
  return { ctx, services: { ...services, updates, tests, balances, local, coder, affinity, ratios, deployments, settings } };
}

function routesOf(
  ctx: GatewayContext,
  services: Awaited<ReturnType<typeof createGatewayContext>>['services'],
  runtime: Runtime | null,
  relay: Relay | null,
  edgeAdmin: EdgeAdminHolder = { port: null },
): OperationImpl<any>[] {
  const edge = new EdgeAdminService(ctx, edgeAdmin);
  const limiter = runtime ? runtime.limiter(`gateway:${ctx.installationId}`) : { hit: async () => ({ allowed: true, remaining: 0, retryAfter: 0 }) };
  return [
    ...staffRoutes(services.staff, services.proofs, limiter as never),
    ...staffAdminRoutes(new StaffAdminService(ctx, services.staff, services.proofs)),
    ...channelRoutes(ctx, services.channels, services.proofs),
    ...channelMoreRoutes(ctx, services.channels),
    ...prefillRoutes(ctx),
    ...modelRoutes(services.models),
    ...jobRoutes(services.jobs),
    ...upstreamUpdateRoutes(services.updates),
    ...channelTestRoutes(services.tests),
    ...balanceRoutes(services.balances),
    ...localModelRoutes(services.local),
    ...coderRoutes(services.coder),
    ...affinityRoutes(services.affinity),
    ...ratioSyncRoutes(services.ratios),
    ...deploymentRoutes(services.deployments),
    ...settingsRoutes(services.settings),
    ...pluginRoutes(services.plugins),
    ...relayRoutes(ctx, relay?.engine as never, (callers) => edge.callerNames(callers)),
    ...edgeAdminRoutes(ctx, edge, services.proofs),
  ];
}

/**
 * Builds the gateway deployable on its own database. `edgeAdmin`: filled with the edge's administration port
 * once the edge is built in this process (main.ts); GS22–GS34 answer GW_EDGE_NOT_SERVED while it is empty.
 */
export async function buildGatewayApp(config: Config, runtime: Runtime, opts: { edgeAdmin?: EdgeAdminHolder } = {}) {
  const { ctx, services } = await createGatewayContext(config, runtime);
  const app = createHttpApp({ logger: ctx.log, trustProxy: config.trustProxy, bodyLimit: config.bodyLimitBytes, maxJsonDepth: config.bodyMaxDepth, catalog: errorCatalog, renderError: renderRelayError });
  const relay = createRelay(ctx, services, runtime);
  app.decorate('gateway', ctx);
  let registered: ReturnType<typeof registerOperations>;
  try {
    // Plugin routes are registered once, here: Fastify cannot add routes after listen.
    await services.plugins.load();
    registered = registerOperations(app, {
      deployable: 'gateway',
      implementations: routesOf(ctx, services, runtime, relay, opts.edgeAdmin),
      authenticate: gatewayAuthenticator(services.staff, workloadAuthenticator(config), config.gateway.operationPermissions),
      enabledOperations: config.enabledOperations.filter((id) => id.startsWith('G')),
      rateLimits: {},
      extra: services.plugins.operations(),
    });
  } catch (e) {
    await app.close();
    await relay.close();
    await ctx.upstream.close();
    await ctx.database.close();
    throw e;
  }
  // Any non-GET channel operation may change list totals: drop the cached counts of this instance.
  app.addHook('onSend', async (req) => {
    if (req.method !== 'GET' && req.url.startsWith('/api/channel')) {
      clearCountCache(ctx);
      relay.routing.invalidate();
      ctx.metrics.channelsChanged();
    }
  });
  const registry = installOpsEndpoints(app, {
    name: 'gateway',
    access: { token: config.opsToken, behindProxy: config.trustProxy },
    readiness: { database: () => ctx.database.ping() },
    openapi: async () => buildOpenApi('Gateway API', await services.plugins.withState(registered)),
  });
  relay.instrument(registry);
  ctx.metrics.register(registry);
  await installConsole(app, { dir: `${config.consoleDir || CONSOLE_ROOT}/gateway`, log: ctx.log });
  services.updates.startSchedule();
  app.addHook('onClose', async () => {
    services.updates.stopSchedule();
    services.plugins.close();
    await relay.close();
    await services.jobs.close();
    await ctx.upstream.close();
    await ctx.database.close();
  });
  return { app, database: ctx.database, ctx, services, relay };
}

/**
 * The manifest view: which gateway operations are implemented (no database needed), with the routes of
 * the plugins on disk in their default state. Without a config only the shipped (factory) plugins are
 * read, so docs/operations.md does not depend on the machine.
 */
export function gatewayOperations(config?: Config) {
  const none = null as unknown as GatewayContext;
  const fake = { staff: null, proofs: null, channels: null, models: null, jobs: null, updates: null, plugins: null, tests: null, balances: null, local: null, coder: null, affinity: null, ratios: null, deployments: null } as never;
  const builtIn = operationsOf('gateway', routesOf(none, fake, null, null));
  const dirs = config
    ? { factory: config.gateway.pluginFactory ? FACTORY_DIR : null, installed: config.gateway.pluginDir }
    : { factory: FACTORY_DIR, installed: null };
  const plugins = pluginOperations(activePackages(scanPlugins(dirs).packages).values(), defaultEnabled);
  const all = [...builtIn, ...plugins];
  assertNoRouteConflicts(all.map((o) => o.spec));
  return all;
}
