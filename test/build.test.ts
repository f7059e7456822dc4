import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { tempDir } from './helpers/services.js';

// The tests run the TypeScript sources with tsx; npm start and npm run cli run the compiled build in dist/.
// This builds it as `prepare` does and checks that it runs, and that every file a module reads relative to
// itself (the consoles, the shipped plugins, package.json, the files beside a module) is found from dist/.
const run = promisify(execFile);
const SESSION_SECRET = 'build-test-session-secret-0123456789';

const cli = (dataDir: string, ...args: string[]) =>
  run(process.execPath, ['--enable-source-maps', 'dist/cli.js', ...args], { env: { ...process.env, DATA_DIR: dataDir, SESSION_SECRET, LOG_LEVEL: 'warn' } });

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Files of src/ but the tests' golden files (fixtures/ folders). */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'fixtures' ? [] : sourceFiles(path.join(dir, e.name))) : [path.join(dir, e.name)]));
}

describe('the compiled build (dist/)', () => {
  const dataDir = tempDir();
  before(() => {
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
  });

  test('has a module and a source map for every source file, and the files the code reads beside itself', () => {
    for (const f of sourceFiles('src').filter((f) => !f.endsWith('.test.ts'))) {
      const out = path.join('dist', path.relative('src', f)).replace(/\.ts$/, '.js');
      assert.ok(fs.existsSync(out), `${out} is missing`);
      if (f.endsWith('.ts')) assert.ok(fs.existsSync(`${out}.map`), `${out}.map is missing`);
    }
  });

  test('cli --help, and a command that reads a file beside its module (the common-password list)', async () => {
    const help = await cli(dataDir, '--help');
    assert.match(help.stdout, /^Usage: cli /);
    assert.match(help.stdout, /user/);
    await assert.rejects(cli(dataDir, 'user', 'create', '--username', 'common', '--password', 'baseball'), /one of the most common passwords/);
    const created = await cli(dataDir, 'user', 'create', '--username', 'builtroot', '--password', 'a long build test password', '--role', 'root');
    assert.match(created.stdout, /created user builtroot/);
  });

  test('manifest lists the plugins shipped in plugins/', async () => {
    const manifest = JSON.parse((await cli(dataDir, 'manifest')).stdout) as { path: string }[];
    assert.ok(manifest.some((m) => m.path === '/api/task/example-echo-video/submit'));
  });

  describe('main.js serving the account, gateway and edge', () => {
    let child: ReturnType<typeof spawn>;
    const ports = { account: 0, gateway: 0, edge: 0 };
    before(async () => {
      for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
      child = spawn(process.execPath, ['--enable-source-maps', 'dist/main.js'], {
        env: {
          ...process.env,
          DATA_DIR: dataDir,
          SESSION_SECRET,
          LOG_LEVEL: 'warn',
          SERVICES: 'account,gateway,edge',
          PUBLIC_ADMISSION_MODE: 'controlled',
          ACCOUNT_HOST: '127.0.0.1',
          ACCOUNT_PORT: String(ports.account),
          GATEWAY_PORT: String(ports.gateway),
          EDGE_PORT: String(ports.edge),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      for (const port of Object.values(ports)) {
        for (let i = 0; ; i++) {
          const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
          if (ok) break;
          assert.ok(i < 600 && child.exitCode === null, `port ${port} not ready`);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    });
    after(async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    });

    test('answers /readyz on every service, and /api/status with the version of package.json', async () => {
      const status = (await (await fetch(`http://127.0.0.1:${ports.account}/api/status`)).json()) as { data: { version: string } };
      assert.equal(status.data.version, JSON.parse(fs.readFileSync('package.json', 'utf8')).version);
    });

    test('serves the console from web/dist when it was built', { skip: !fs.existsSync('web/dist/account/index.html') && 'web/dist not built' }, async () => {
      const page = await fetch(`http://127.0.0.1:${ports.account}/`, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<html/i);
    });
  });
});
