// The operator CLI's commands (src/cli.ts runs them). Only commander and the command definitions are loaded
// up front; each command's action imports the modules it uses, so `cli --help` and a command load no more
// than they need.
import { Command } from 'commander';
import type { Config } from './config/index.js';
import type { Runtime } from './runtime.js';
import { registerAccountCommands } from './account/cli.js';
import { registerGatewayCommands } from './gateway/cli.js';
import { registerOAuthCommands } from './account/oauth/cli.js';
import { registerImportCommands } from './import/cli.js';
import { registerEdgeCommands } from './edge/cli.js';

/** Loads configuration when a command needs it (`manifest` needs none), with logs kept off stdout. */
async function boot() {
  const { loadConfig } = await import('./config/index.js');
  const { createRuntime } = await import('./runtime.js');
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
  const runtime = createRuntime(config, process.stderr as never);
  return { config, runtime };
}

/** The gateway's relay in this process, for edge commands that call it when both services run here. */
async function localRelay(config: Config, runtime: Runtime) {
  const { createGatewayContext } = await import('./gateway/app.js');
  const { createRelay } = await import('./gateway/relay/index.js');
  const g = await createGatewayContext(config, runtime);
  const relay = createRelay(g.ctx, g.services, runtime);
  return {
    relay: relay.engine,
    async close() {
      await relay.close();
      await g.ctx.upstream.close();
      await g.ctx.database.close();
    },
  };
}

/**
 * The edge's customer port for account commands, as src/services.ts wires the server: the edge opened in this
 * process when SERVICES names it, else over ACCOUNT_EDGE_URL (none without it).
 */
export async function openCustomerPort(config: Config, runtime: Runtime) {
  if (config.services.includes('edge')) {
    const { createEdgeContext } = await import('./edge/app.js');
    const e = await createEdgeContext(config, runtime);
    return { port: e.services.customers, close: e.close };
  }
  const { remoteCustomerPort } = await import('./account/customers/http-port.js');
  return { port: remoteCustomerPort(config, runtime.log.child({ deployable: 'account' })), close: async () => {} };
}

/** Every command of the CLI, not yet parsed. */
export function cliProgram(): Command {
  const program = new Command('cli').description('operator commands for the account, gateway and edge services');

  program
    .command('manifest')
    .description('print the route manifest of every deployable as JSON')
    .action(async () => {
      const { loadConfig } = await import('./config/index.js');
      const { accountOperations } = await import('./account/app.js');
      const { gatewayOperations } = await import('./gateway/app.js');
      const { edgeOperations } = await import('./edge/app.js');
      const { buildManifest } = await import('./contract/manifest.js');
      const { referenceManifest } = await import('./contract/coverage.js');
      // The gateway's installed plugins (GATEWAY_PLUGIN_DIR) are listed too, in their default state.
      const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
      console.log(JSON.stringify([...buildManifest([...accountOperations(), ...gatewayOperations(config), ...edgeOperations()]), ...referenceManifest()], null, 2));
    });

  registerAccountCommands(program, boot, openCustomerPort);
  registerGatewayCommands(program, boot);
  registerEdgeCommands(program, boot, localRelay);
  registerOAuthCommands(program);
  registerImportCommands(program, boot);
  return program;
}
