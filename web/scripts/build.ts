// Builds the web consoles into web/dist/account and web/dist/gateway (npm run build:console; `prepare`
// runs it on npm install / npm ci). Steps: typed API client from the registry, type check, Vite build.
// With --if-possible (prepare) a machine without the dev dependencies skips the build with a notice:
// the services then start without their console.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const web = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
let vite: typeof import('vite');
try {
  vite = await import('vite');
} catch {
  if (process.argv.includes('--if-possible')) {
    console.log('web console not built: vite is not installed (dev dependencies omitted)');
    process.exit(0);
  }
  throw new Error('vite is not installed: run npm install');
}

await import('./gen-client.js');
const tsc = spawnSync(process.execPath, [path.join(web, '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(web, 'tsconfig.json')], { stdio: 'inherit' });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const name of ['account', 'gateway']) {
  await vite.build({
    configFile: false,
    logLevel: 'warn',
    root: path.join(web, 'src', name),
    base: '/',
    publicDir: false,
    oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
    build: { outDir: path.join(web, 'dist', name), emptyOutDir: true, sourcemap: false, target: 'es2022' },
  });
  console.log(`built web/dist/${name}`);
}
