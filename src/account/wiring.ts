// The account's context and services without HTTP (app.ts adds the routes): the CLI opens these alone.
import { persistentSecret, type Config } from '../config/index.js';
import { migrate, openDatabase } from '../kit/db/index.js';
import type { Runtime } from '../runtime.js';
import type { AccountDB } from './db.js';
import { accountMigrations } from './migrations/index.js';
import type { AccountContext, AccountServices } from './context.js';
import { createUsersService } from './users/service.js';
import { createSessionsService } from './sessions/service.js';
import { createLoginService } from './login/service.js';
import { createFlowsService } from './flows/service.js';
import { installSecondFactor } from './verification/install.js';
import { createEmailOAuthServices } from './oauth/wiring.js';
import { createSelfService } from './dashboard/self.js';

const INVALIDATE = 'account:invalidate';

/** Opens the account database, runs its migrations and wires its services (no HTTP). */
export async function createAccountContext(config: Config, runtime: Runtime): Promise<AccountContext> {
  const secret = config.sessionSecret || persistentSecret(config.dataDir, 'session_secret');
  const database = await openDatabase<AccountDB>(config.account.databaseUrl);
  await migrate(database, 'account', accountMigrations(database.dialect));
  const ctx: AccountContext = {
    config,
    database,
    log: runtime.log.child({ deployable: 'account' }),
    bus: runtime.bus,
    limiter: runtime.limiter('rl:account'),
    secret,
    hooks: {},
    services: {} as AccountServices,
    async invalidateUser(userId) {
      ctx.services.sessions.forgetUser(userId);
      await runtime.bus.publish(INVALIDATE, `u:${userId}`);
    },
    async invalidateSession(sid) {
      ctx.services.sessions.forgetSession(sid);
      await runtime.bus.publish(INVALIDATE, `s:${sid}`);
    },
  };
  ctx.services.users = createUsersService(ctx);
  ctx.services.sessions = createSessionsService(ctx);
  ctx.services.login = createLoginService(ctx);
  ctx.services.flows = createFlowsService(ctx);
  installSecondFactor(ctx);
  ctx.services.emailOAuth = createEmailOAuthServices(ctx);
  ctx.services.self = createSelfService(ctx);
  await runtime.bus.subscribe(INVALIDATE, (m) => {
    if (m.startsWith('u:')) ctx.services.sessions.forgetUser(Number(m.slice(2)));
    else if (m.startsWith('s:')) ctx.services.sessions.forgetSession(m.slice(2));
  });
  return ctx;
}

