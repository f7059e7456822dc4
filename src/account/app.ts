import cookie from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/index.js';
import { createHttpApp } from '../kit/http/app.js';
import { installOpsEndpoints } from '../kit/http/ops-endpoints.js';
import { CONSOLE_ROOT, installConsole } from '../kit/http/console.js';
import { warmUpPasswordHashing } from '../kit/crypto/password.js';
import { errorCatalog } from '../contract/errors/index.js';
import { registerOperations, operationsOf } from '../contract/registry.js';
import { buildOpenApi } from '../contract/openapi.js';
import { ipBucket, principalBucket } from '../contract/buckets.js';
import { aliasRoutes } from '../contract/coverage.js';
import { operations } from '../contract/operations.js';
import { dashboardPlaceholderOperations } from '../contract/dashboard-routes.js';
import { gatewayConsoleOperations } from '../contract/gateway-console-routes.js';
import type { OperationImpl } from '../contract/types.js';
import type { Runtime } from '../runtime.js';
import { createAccountContext, type AccountServices } from './wiring.js';
import { accountAuthenticator, originGuard } from './auth.js';
import { sessionRoutes } from './sessions/routes.js';
import { userRoutes } from './users/routes.js';
import { loginRoutes } from './login/routes.js';
import { twoFactorRoutes } from './two-factor/routes.js';
import { verificationRoutes } from './verification/routes.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { emailBindingRoutes, emailCodeRoutes } from './email/routes.js';
import { resetRoutes } from './reset/routes.js';
import { bindingRoutes } from './bindings/routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { socialRoutes } from './oauth/social-routes.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { unconfiguredRoutes } from './dashboard/unconfigured.js';
import { userAdminRoutes } from './user-admin/routes.js';
import { customerRoutes } from './customers/routes.js';
import { renderPlaygroundError } from './customers/playground/routes.js';
import type { CustomerHolder } from '../contract/customer.js';

export { createAccountContext, type AccountServices };

/** Every implemented account operation, each route given the services it calls; the registry marks the rest planned. */
function routesOf(s: AccountServices): OperationImpl<any>[] {
  return [
    ...loginRoutes(s.login),
    ...sessionRoutes(s.sessions),
    ...userRoutes(s.users),
    ...twoFactorRoutes(s.twoFactor, s.verification),
    ...verificationRoutes(s.verification),
    ...passkeyRoutes(s.passkeys, s.verification),
    ...emailCodeRoutes(s.email),
    ...emailBindingRoutes(s.emailBinding, s.verification),
    ...resetRoutes(s.reset),
    ...oauthRoutes(s.oauth, s.verification),
    ...bindingRoutes(s.bindings, s.users, s.email, s.verification),
    ...socialRoutes(s.wechat, s.telegram, s.verification),
    ...dashboardRoutes(s.self, s.oauth),
    ...unconfiguredRoutes(),
    ...userAdminRoutes(s.userAdmin, s.userChanges),
    ...customerRoutes(s),
  ];
}

/**
 * Builds the account deployable: its context and services plus the HTTP app with every account operation.
 * `customers` carries the edge's customer port when it is reachable (filled later by src/services.ts when
 * the edge is built in this process).
 */
export async function buildAccountApp(config: Config, runtime: Runtime, customers: CustomerHolder = { port: null }) {
  const { ctx, services } = await createAccountContext(config, runtime, customers);
  await warmUpPasswordHashing();
  const app = createHttpApp({ logger: ctx.log, trustProxy: config.trustProxy, bodyLimit: config.bodyLimitBytes, maxJsonDepth: config.bodyMaxDepth, catalog: errorCatalog, renderError: renderPlaygroundError });
  await app.register(cookie);
  app.decorate('account', ctx);
  const rl = config.rateLimit;
  const userKey = (req: FastifyRequest) => (req.accountIdentity ? String(req.accountIdentity.userId) : null);
  const registered = registerOperations(app, {
    deployable: 'account',
    implementations: routesOf(services),
    authenticate: accountAuthenticator(services.sessions),
    enabledOperations: config.enabledOperations.filter((id) => id.startsWith('A')),
    guards: { originGuard },
    extra: [...dashboardPlaceholderOperations(), ...gatewayConsoleOperations()],
    aliases: aliasRoutes('account'),
    rateLimits: {
      critical: ipBucket(ctx.limiter, 'critical', rl.critical, rl.criticalDuration, rl.criticalEnabled),
      refresh: ipBucket(ctx.limiter, 'refresh', rl.refresh, rl.refreshDuration, rl.criticalEnabled),
      // Per user: step-up and second-factor routes (one account, many IPs).
      security: principalBucket(ctx.limiter, 'security', config.securityRateLimit, config.securityRateLimitDuration, userKey),
      // Per user, apart: reads of the factor state, which a profile page calls several times per load.
      security_read: principalBucket(ctx.limiter, 'security_read', config.securityReadRateLimit, config.securityReadRateLimitDuration, userKey),
    },
  });
  installOpsEndpoints(app, {
    name: 'account',
    access: { token: config.opsToken, behindProxy: config.trustProxy },
    readiness: {
      database: () => ctx.database.ping(),
      ...(runtime.redis ? { redis: async () => void (await runtime.redis!.ping()) } : {}),
    },
    openapi: () => buildOpenApi('Account API', registered),
  });
  await installConsole(app, { dir: `${config.consoleDir || CONSOLE_ROOT}/account`, log: ctx.log, settings: () => consoleSettings(config, services.oauth) });
  const purge = setInterval(() => {
    services.sessions.purge().catch((e) => ctx.log.warn({ err: e }, 'session purge failed'));
    services.flows.purge().catch((e) => ctx.log.warn({ err: e }, 'flow purge failed'));
    services.email.purge().catch((e) => ctx.log.warn({ err: e }, 'email code purge failed'));
  }, 3600_000);
  purge.unref();
  app.addHook('onClose', async () => {
    clearInterval(purge);
    await ctx.database.close();
  });
  return { app, ctx, services };
}

/** What the web console needs before anyone logs in (no secrets): providers and feature switches. */
function consoleSettings(config: Config, oauth: AccountServices['oauth']) {
  const providers = [...oauth.providers.values()].filter((p) => p.enabled);
  const { telegram: tg, wechat } = config.mailOAuth;
  return {
    oauth: providers.map((p) => ({ slug: p.slug, name: p.name })),
    passkey: config.passkey.enabled,
    password_encryption: config.passwordLoginEncryptionEnabled,
    email_verification: config.emailVerificationEnabled,
    // The bot id is the public part of the token before ':' (Telegram's login page takes it); never the token.
    telegram: tg.botToken && /^\d+:/.test(tg.botToken) ? { bot_id: tg.botToken.split(':')[0], bot_name: tg.botName } : null,
    wechat: wechat.enabled && !!wechat.serverAddress,
    // The customers' base URL for their SDKs (the key snippets); '' = this page's own origin.
    edge_url: config.edgePublicUrl,
    // Whether the edge serves Anthropic's Messages API: the console then offers the Claude Code snippet.
    edge_anthropic: operations.some((o) => o.deployable === 'edge' && o.method === 'POST' && o.path === '/v1/messages'),
  };
}

/** The registered account operations without opening anything (for the manifest). */
export function accountOperations() {
  const none = {} as AccountServices;
  return [...operationsOf('account', routesOf(none)), ...dashboardPlaceholderOperations(), ...gatewayConsoleOperations()];
}
