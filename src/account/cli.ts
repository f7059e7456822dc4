// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import type { Command } from 'commander';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import type { AccountContext } from './context.js';
import type { AccountServices } from './wiring.js';
import type { CustomerPort } from '../contract/customer.js';

type Boot = () => { config: Config; runtime: Runtime } | Promise<{ config: Config; runtime: Runtime }>;

/**
 * The edge's customer port for a command (src/cli-program.ts): the edge opened in this process when it is one
 * of SERVICES, else over ACCOUNT_EDGE_URL, else none (as the account server reaches it, src/services.ts).
 */
export type OpenCustomerPort = (config: Config, runtime: Runtime) => Promise<{ port: CustomerPort | null; close(): Promise<void> }>;

const always = () => true;

/** Who the edge's audit log says turned a user's keys off or on from this CLI. */
const CLI_ACTOR = 'system:account-cli';

async function roleOf(name: string): Promise<number> {
  const { ROLE } = await import('./db.js');
  const roles: Record<string, number> = { user: ROLE.user, admin: ROLE.admin, root: ROLE.root };
  const r = roles[name];
  if (!r) throw new Error(`--role must be one of ${Object.keys(roles).join(', ')}`);
  return r;
}

/**
 * `user …` commands: work against the same database as a running server. Those that touch a user's wallet or
 * keys (create: the starting balance; disable, enable: the keys) reach the edge as the server does.
 */
export function registerAccountCommands(program: Command, boot: Boot, openCustomerPort?: OpenCustomerPort) {
  const user = program.command('user').description('manage account users');
  const withAccount = async <T>(fn: (account: { ctx: AccountContext; services: AccountServices }) => Promise<T>, o: { edge?: (config: Config) => boolean } = {}) => {
    const { config, runtime } = await boot();
    const { createAccountContext } = await import('./wiring.js');
    const edge = o.edge?.(config) && openCustomerPort ? await openCustomerPort(config, runtime) : null;
    try {
      const { ctx, services } = await createAccountContext(config, runtime, { port: edge?.port ?? null });
      try {
        return await fn({ ctx, services });
      } finally {
        await ctx.database.close();
      }
    } finally {
      await edge?.close();
      await runtime.close();
    }
  };

  user
    .command('create')
    .description('create a user (the password must pass the password policy) with the starting balance (QUOTA_FOR_NEW_USER)')
    .requiredOption('--username <username>', 'login name')
    .requiredOption('--password <password>', 'initial password')
    .option('--email <email>', 'email address')
    .option('--role <role>', 'root | admin | user', 'user')
    .action(async (o) => {
      const role = await roleOf(o.role);
      const { passwordProblem } = await import('./users/password-policy.js');
      const id = await withAccount(async ({ ctx, services }) => {
        const problem = passwordProblem(o.password, { username: o.username, words: ctx.config.passwordContextWords });
        if (problem) throw new Error(problem);
        const id = await services.users.insertUser({ username: o.username, password: o.password, email: o.email ?? null, role });
        await services.users.grantStartingBalance(id);
        return id;
      }, { edge: (config) => config.quotaForNewUser > 0 });
      console.log(`created user ${o.username} (id ${id}, role ${o.role})`);
    });

  user
    .command('set-role')
    .description("change a user's role; ends the user's sessions")
    .requiredOption('--username <username>', 'the user')
    .requiredOption('--role <role>', 'root | admin | user')
    .action(async (o) => {
      const role = await roleOf(o.role);
      await withAccount(async ({ services }) => {
        const u = await services.users.byUsernameOrThrow(o.username);
        await services.users.setSecurity(Number(u.id), { role });
      });
      console.log(`user ${o.username} is now ${o.role}; existing sessions were ended`);
    });

  user
    .command('disable')
    .description("stop a user from signing in, end all of their sessions and stop their API keys at the edge (refused when the edge cannot be reached)")
    .requiredOption('--username <username>', 'the user')
    .action(async (o) => {
      await withAccount(async ({ services }) => {
        const u = await services.users.byUsernameOrThrow(o.username);
        await services.users.disable(Number(u.id), CLI_ACTOR);
      }, { edge: always });
      console.log(`user ${o.username} disabled; all sessions revoked`);
    });

  user
    .command('enable')
    .description("let a disabled user sign in again and turn their API keys back on (also how an account held by `import new-api` is released)")
    .requiredOption('--username <username>', 'the user')
    .action(async (o) => {
      await withAccount(async ({ services }) => {
        const u = await services.users.byUsernameOrThrow(o.username);
        await services.users.enable(Number(u.id), CLI_ACTOR);
      }, { edge: always });
      console.log(`user ${o.username} enabled`);
    });

  user
    .command('logout')
    .description("end a user's sessions (--username) or every user's (--all); running servers refuse them at once")
    .option('--username <username>', "this user's sessions")
    .option('--all', 'every session of every user')
    .action(async (o) => {
      if (Boolean(o.username) === Boolean(o.all)) throw new Error('give exactly one of --username or --all');
      const n = await withAccount(async ({ services }) => {
        if (o.all) return services.sessions.revokeEveryone('admin_logout_all');
        const u = await services.users.byUsernameOrThrow(o.username);
        return services.sessions.revokeAllOfUser(Number(u.id), 'admin_logout');
      });
      console.log(`${n} session(s) ended`);
    });

  user
    .command('token')
    .description('issue a personal access token (printed once, on the last line)')
    .requiredOption('--username <username>', 'the user')
    .action(async (o) => {
      const token = await withAccount(async ({ services }) => {
        const u = await services.users.byUsernameOrThrow(o.username);
        return services.users.createAccessToken(Number(u.id));
      });
      console.log(token);
    });
}
