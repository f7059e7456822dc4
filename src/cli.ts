import { Command } from 'commander';
import { ConfigError, loadConfig } from './config/index.js';
import { createRuntime } from './runtime.js';
import { registerAccountCommands } from './account/cli.js';
import { registerGatewayCommands } from './gateway/cli.js';
import { registerOAuthCommands } from './account/oauth/cli.js';
import { registerImportCommands } from './import/cli.js';
import { accountOperations } from './account/app.js';
import { createGatewayContext, gatewayOperations } from './gateway/app.js';
import { createRelay } from './gateway/relay/index.js';
import type { Config } from './config/index.js';
import type { Runtime } from './runtime.js';
import { registerEdgeCommands } from './edge/cli.js';
import { edgeOperations } from './edge/app.js';
import { buildManifest } from './contract/manifest.js';
import { referenceManifest } from './contract/coverage.js';

/** Loads configuration lazily (a command such as `manifest` needs none) with logs kept off stdout. */
function boot() {
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
  const runtime = createRuntime(config, process.stderr as never);
  return { config, runtime };
}

const program = new Command('cli').description('operator commands for the account, gateway and edge services');

program
  .command('manifest')
  .description('print the route manifest of every deployable as JSON')
  .action(() => {
    // The gateway's installed plugins (GATEWAY_PLUGIN_DIR) are listed too, in their default state.
    const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env });
    console.log(JSON.stringify([...buildManifest([...accountOperations(), ...gatewayOperations(config), ...edgeOperations()]), ...referenceManifest()], null, 2));
  });

registerAccountCommands(program, boot);
registerGatewayCommands(program, boot);
/** The gateway's relay in this process, for edge commands that call it when both services run here. */
async function localRelay(config: Config, runtime: Runtime) {
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

registerEdgeCommands(program, boot, localRelay);
registerOAuthCommands(program);
registerImportCommands(program, boot);

// Exit once stdout has been flushed: a pipe (npm run manifest | jq) would otherwise be cut short.
const exitAfterFlush = (code: number) => process.stdout.write('', () => process.exit(code));

program.parseAsync(process.argv).then(
  () => exitAfterFlush(0),
  (e: unknown) => {
    console.error(e instanceof ConfigError ? `configuration error: ${e.message}` : `error: ${(e as Error).message}`);
    exitAfterFlush(1);
  },
);
