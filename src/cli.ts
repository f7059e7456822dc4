// The operator CLI (npm run cli; commands in cli-program.ts).
import { cliProgram } from './cli-program.js';

// Exit once stdout has been flushed: a pipe (npm run manifest | jq) would otherwise be cut short.
const exitAfterFlush = (code: number) => process.stdout.write('', () => process.exit(code));

cliProgram().parseAsync(process.argv).then(
  () => exitAfterFlush(0),
  async (e: unknown) => {
    const { ConfigError } = await import('./config/read.js');
    console.error(e instanceof ConfigError ? `configuration error: ${e.message}` : `error: ${(e as Error).message}`);
    exitAfterFlush(1);
  },
);
