import cookie from '@fastify/cookie';
import type { Config } from '../config/index.js';
import { createHttpApp } from '../kit/http/app.js';
import { installOpsEndpoints } from '../kit/http/ops-endpoints.js';
import { CONSOLE_ROOT, installConsole } from '../kit/http/console.js';
import { warmUpPasswordHashing } from '../kit/crypto/password.js';
import { errorCatalog } from '../contract/errors/index.js';
import { registerOperations, operationsOf } from '../contract/registry.js';
import { buildOpenApi } from '../contract/openapi.js';
import { ipBucket, principalBucket } from '../contract/buckets.js';
import type { Runtime } from '../runtime.js';
import { authenticateAccount, originGuard } from './auth.js';
import { accountRoutes } from './routes.js';
import { aliasRoutes } from '../contract/coverage.js';
import { dashboardPlaceholderOperations } from '../contract/dashboard-routes.js';
import type { AccountContext } from './context.js';
import { createAccountContext } from './wiring.js';

export { createAccountContext };

/** Builds the account deployable: its context plus the HTTP app with every account operation. */
export async function buildAccountApp(config: Config, runtime: Runtime) {
  const ctx = await createAccountContext(config, runtime);
  await warmUpPasswordHashing();
  const app = createHttpApp({ logger: ctx.log, trustProxy: config.trustProxy, bodyLimit: config.bodyLimitBytes, maxJsonDepth: config.bodyMaxDepth, catalog: errorCatalog });
  await app.register(cookie);
  app.decorate('account', ctx);
  const rl = config.rateLimit;
  const registered = registerOperations(app, {
    deployable: 'account',
    implementations: accountRoutes,
    authenticate: authenticateAccount,
    enabledOperations: config.enabledOperations.filter((id) => id.startsWith('A')),
    guards: { originGuard },
    extra: dashboardPlaceholderOperations(),
    aliases: aliasRoutes('account'),
    rateLimits: {
      critical: ipBucket(ctx.limiter, 'critical', rl.critical, rl.criticalDuration, rl.criticalEnabled),
      refresh: ipBucket(ctx.limiter, 'refresh', rl.refresh, rl.refreshDuration, rl.criticalEnabled),
      security: securityBucket(ctx),
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
  await installConsole(app, { dir: `${config.consoleDir || CONSOLE_ROOT}/account`, log: ctx.log, settings: () => consoleSettings(ctx) });
  const purge = setInterval(() => {
    ctx.services.sessions.purge().catch((e) => ctx.log.warn({ err: e }, 'session purge failed'));
    ctx.services.flows.purge().catch((e) => ctx.log.warn({ err: e }, 'flow purge failed'));
    ctx.services.emailOAuth.email.purge().catch((e) => ctx.log.warn({ err: e }, 'email code purge failed'));
  }, 3600_000);
  purge.unref();
  app.addHook('onClose', async () => {
    clearInterval(purge);
    await ctx.database.close();
  });
  return { app, ctx };
}

/** The per-user bucket of step-up and second-factor routes (one account, many IPs). */
function securityBucket(ctx: AccountContext) {
  const c = ctx.config;
  return principalBucket(ctx.limiter, 'security', c.securityRateLimit, c.securityRateLimitDuration, (req) =>
    req.accountIdentity ? String(req.accountIdentity.userId) : null,
  );
}

/** What the web console needs before anyone logs in (no secrets): providers and feature switches. */
function consoleSettings(ctx: AccountContext) {
  const providers = [...ctx.services.emailOAuth.oauth.providers.values()].filter((p) => p.enabled);
  const { telegram: tg, wechat } = ctx.config.mailOAuth;
  return {
    oauth: providers.map((p) => ({ slug: p.slug, name: p.name })),
    passkey: ctx.config.passkey.enabled,
    password_encryption: ctx.config.passwordLoginEncryptionEnabled,
    email_verification: ctx.config.emailVerificationEnabled,
    // The bot id is the public part of the token before ':' (Telegram's login page takes it); never the token.
    telegram: tg.botToken && /^\d+:/.test(tg.botToken) ? { bot_id: tg.botToken.split(':')[0], bot_name: tg.botName } : null,
    wechat: wechat.enabled && !!wechat.serverAddress,
  };
}

/** The registered account operations without opening anything (for the manifest). */
export function accountOperations() {
  return [...operationsOf('account', accountRoutes), ...dashboardPlaceholderOperations()];
}
