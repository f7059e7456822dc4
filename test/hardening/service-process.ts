import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ServiceProcess {
  url: string;
  /** SIGKILL, then waits for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM, then waits for the exit (0 expected). */
  stop(): Promise<number | null>;
  output: string[];
}

/**
 * `src/main.ts` as its own process serving one service (SERVICES=account, gateway or edge) on a free loopback
 * port, started like production (node with tsx as a loader, so a SIGKILL leaves no child behind); resolves
 * once it answers HTTP.
 */
export async function startServiceProcess(service: 'account' | 'gateway' | 'edge', env: Record<string, string>, port?: number): Promise<ServiceProcess & { port: number }> {
  port ??= await freePort();
  const prefix = service.toUpperCase();
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, SERVICES: service, [`${prefix}_HOST`]: '127.0.0.1', [`${prefix}_PORT`]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => output.push(String(c)));
  child.stderr!.on('data', (c) => output.push(String(c)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${service} exited at start-up: ${output.join('')}`);
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`${service} did not answer within 90 s: ${output.join('')}`);
    }
    try {
      await fetch(url + '/', { signal: AbortSignal.timeout(2000) });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    port,
    output,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
