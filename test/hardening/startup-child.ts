// A process that starts like `npm start` or like a CLI command, once per message from its parent, on the
// environment the message gives: startup-race.test.ts runs several at once on one fresh database.
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { buildServices } from '../../src/services.js';
import { cliProgram } from '../../src/cli-program.js';

export interface StartupRequest {
  env: Record<string, string>;
  /** `serve`: build every service of SERVICES and close them again; else the CLI's arguments. */
  argv: string[];
}

const baseEnv = { ...process.env };

async function serve() {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'error' });
  const runtime = createRuntime(config, { write: () => {} } as never);
  try {
    const built = await buildServices(config, runtime);
    await Promise.all(built.map((b) => b.app.close()));
  } finally {
    await runtime.close();
  }
}

process.on('message', async (request: StartupRequest) => {
  process.env = { ...baseEnv, ...request.env };
  const log = console.log;
  console.log = () => {};
  try {
    if (request.argv[0] === 'serve') await serve();
    else await cliProgram().exitOverride().parseAsync(request.argv, { from: 'user' });
    process.send!({ ok: true });
  } catch (e) {
    process.send!({ ok: false, error: (e as Error).message });
  } finally {
    console.log = log;
  }
});
process.send!({ ready: true });
