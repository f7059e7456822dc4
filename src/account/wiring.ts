// The account's services composed in one place, without HTTP (app.ts gives the routes the services they
// call): the CLI and the importer open these alone, without loading Fastify, the routes or OpenAPI.
import path from 'node:path';
import { persistentSecret, type Config } from '../config/index.js';
import { migrate, openDatabase } from '../kit/db/index.js';
import { createMailer } from '../kit/mail/index.js';
import type { Runtime } from '../runtime.js';
import type { AccountDB } from './db.js';
import { accountMigrations } from './migrations/index.js';
import type { AccountContext } from './context.js';
import { createFlowsService } from './flows/service.js';
import { createSessionsService } from './sessions/service.js';
import { createUsersService } from './users/service.js';
import { createPasswordEncryption } from './login/password-encryption.js';
import { createLoginService } from './login/service.js';
import { createTwoFactorService } from './two-factor/service.js';
import { createVerificationService } from './verification/service.js';
import { createPasskeysService } from './passkeys/service.js';
import { createEmailService } from './email/service.js';
import { createEmailBindingService } from './email/binding.js';
import { createResetService } from './reset/service.js';
import { createBindingsService } from './bindings/service.js';
import { createProviders } from './oauth/providers.js';
import { createOAuthService } from './oauth/service.js';
import { createWeChatService } from './oauth/wechat.js';
import { createTelegramService } from './oauth/telegram.js';
import { createSelfService } from './dashboard/self.js';
import { createUserAdminService } from './user-admin/service.js';
import { createUserChanges } from './user-admin/changes.js';
import { createCustomerServices } from './customers/service.js';
import { edgeAccess } from './customers/edge.js';
import { createSignupGrant } from './customers/wallet/service.js';
import { createKeySwitch } from './customers/tokens/service.js';
import type { CustomerHolder } from '../contract/customer.js';

/**
 * Opens the account database (migrated) and composes its services, each handed the peers it uses; used by
 * the app, the CLI and the importer. `customers` carries the edge's customer port once it is reachable
 * (src/services.ts fills it when the edge is built in this process); without it the customer API answers
 * EDGE_UNAVAILABLE.
 */
export async function createAccountContext(config: Config, runtime: Runtime, customers: CustomerHolder = { port: null }) {
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
  };
  const mail = config.mailOAuth.mail;
  const mailer = createMailer({ smtpUrl: mail.smtpUrl, from: mail.from, outboxDir: path.join(config.dataDir, 'outbox'), log: ctx.log.child({ module: 'mail' }) });
  const flows = createFlowsService(ctx);
  const email = createEmailService(ctx, mailer);
  const sessions = createSessionsService(ctx, email);
  const edge = edgeAccess(customers);
  const signupGrant = createSignupGrant(edge, ctx.log.child({ module: 'customers' }), config.quotaForNewUser);
  const users = createUsersService(ctx, sessions, email, signupGrant, createKeySwitch(edge, ctx.log.child({ module: 'customers' })));
  const encryption = createPasswordEncryption(ctx);
  const twoFactor = createTwoFactorService(ctx, { flows, users, sessions });
  const providers = createProviders(config.mailOAuth.oauth);
  const bindings = createBindingsService(ctx, providers, signupGrant);
  const verification = createVerificationService(ctx, { flows, sessions, twoFactor, encryption, bindings, providers });
  const login = createLoginService(ctx, { sessions, encryption, verification });
  const passkeys = createPasskeysService(ctx, { flows, users, sessions, verification });
  const customer = createCustomerServices(ctx, edge, users);
  const reset = createResetService(ctx, { email, sessions });
  const services = {
    flows,
    email,
    sessions,
    users,
    twoFactor,
    bindings,
    verification,
    login,
    passkeys,
    emailBinding: createEmailBindingService(ctx, { email, flows, sessions }),
    reset,
    oauth: createOAuthService(ctx, { providers, bindings, email, flows, login, verification }),
    wechat: createWeChatService(ctx, { bindings, email, login }),
    telegram: createTelegramService(ctx, { bindings, flows, login, sessions }),
    /** The caller's own profile, display name and password (what new-api's dashboard edits). */
    self: createSelfService(ctx, sessions, customer.wallet),
    userAdmin: createUserAdminService(ctx, { users, twoFactor, passkeys, sessions, wallet: customer.wallet, tokens: customer.tokens }),
    /** An admin's other changes of a user: create, generated password, reset link, group (user-admin/changes.ts). */
    userChanges: createUserChanges(ctx, users, reset),
    /** new-api's customer API: keys, usage, top-up codes, prices and wallets on the edge (customers/). */
    ...customer,
  };
  await sessions.listenForInvalidations();
  return { ctx, services };
}

export type AccountServices = Awaited<ReturnType<typeof createAccountContext>>['services'];
