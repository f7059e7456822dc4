import { Command } from 'commander';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { registerGatewayCommands } from '../../src/gateway/cli.js';

/**
 * Runs gateway CLI commands in this process (a process per command costs seconds here) on their own
 * database connection, as an operator's CLI process would; returns stdout lines and the error, if any.
 */
export async function gatewayCli(s: { dataDir: string; ctx: { config: { gateway: { databaseUrl: string } } } }, env: Record<string, string>, ...args: string[]) {
  const vars = { DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, LOG_LEVEL: 'warn', ...env };
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {} });
  registerGatewayCommands(program, () => {
    const config = loadConfig(vars);
    return { config, runtime: createRuntime(config, { write: () => {} }) };
  });
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => lines.push(...String(line).split('\n'));
  try {
    await program.parseAsync(args, { from: 'user' });
    return { lines, error: null as string | null };
  } catch (e) {
    return { lines, error: (e as Error).message };
  } finally {
    console.log = log;
  }
}
