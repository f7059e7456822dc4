import { Command } from 'commander';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';

type Register = (program: Command, boot: () => { config: Config; runtime: Runtime }) => void;

/**
 * Runs CLI commands in this process (a process per command costs seconds here) with the configuration of
 * `env` and their own database connections, as an operator's CLI process would; returns the stdout lines
 * and the error message, if any.
 */
export async function runCli(register: Register, env: Record<string, string>, args: string[]) {
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {} });
  register(program, () => {
    const config = loadConfig({ LOG_LEVEL: 'warn', ...env });
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
