import { registerGatewayCommands } from '../../src/gateway/cli.js';
import { runCli } from './cli.js';

/** Runs gateway CLI commands in this process on the server's database (see runCli). */
export async function gatewayCli(s: { dataDir: string; ctx: { config: { gateway: { databaseUrl: string } } } }, env: Record<string, string>, ...args: string[]) {
  return runCli(registerGatewayCommands, { DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, ...env }, args);
}
