// `node --enable-source-maps scripts/run.mjs main|cli [args…]` (npm start, npm run cli): runs dist/main.js or
// dist/cli.js, the compiled server and CLI. npm install and npm ci build them (`prepare`); a missing build, or
// one older than a file of src/ (after a pull or an edit), is built here first, with a line on stderr.
// Development and the tests run the TypeScript sources with tsx instead (npm run dev).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIsStale, buildServer, DIST } from './build.mjs';

const target = process.argv[2];
if (target !== 'main' && target !== 'cli') {
  console.error('usage: node scripts/run.mjs main|cli [arguments]');
  process.exit(2);
}
if (buildIsStale()) {
  console.error('dist/ is missing or older than src/: building it (npm run build)…');
  try {
    await buildServer();
  } catch (e) {
    console.error(`the build failed: ${e instanceof Error ? e.message : String(e)}`);
    console.error('run `npm install` (it builds dist/), or `npm run dev` to run the sources with tsx');
    process.exit(1);
  }
}
const file = path.join(DIST, `${target}.js`);
// What the program sees is `node dist/<target>.js [args…]`, as if started directly.
process.argv.splice(1, 2, file);
await import(pathToFileURL(file).href);
