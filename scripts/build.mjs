// Compiles the server and the CLI (src/**/*.ts, tests left out) to JavaScript in dist/, with source maps:
// `npm run build`, and `prepare` on npm install / npm ci. npm start and npm run cli run the result through
// scripts/run.mjs, which builds again when a file of src/ is newer than the build.
//
// esbuild, not tsc: it is the transformer tsx runs the tests with (tsx depends on it, so it is installed even
// without the dev dependencies), so the compiled code is the code the tests ran; tsc stays the type checker
// (npm run typecheck).
// - One output file per source file: dist/ mirrors src/ at the same depth, so every path a module finds
//   relative to itself (web/dist, plugins/, package.json, the files copied beside it) stays the same.
// - The dependencies in VENDOR ship as hundreds of small ES modules, and Node loads ES modules one by one
//   (kysely alone is 262 files): they are bundled into dist/vendor/ (a module each, shared code in common
//   chunks) and the compiled files import them from there. Every other package is imported from
//   node_modules as it is.
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const SRC = path.join(ROOT, 'src');
export const DIST = path.join(ROOT, 'dist');
/** Written last by a build: its time is the build's. */
export const STAMP = path.join(DIST, '.built');

/** dist/vendor/<name>.js ← the package (or package subpath) imported by that specifier. */
const VENDOR = {
  kysely: 'kysely',
  typebox: '@sinclair/typebox',
  'typebox-value': '@sinclair/typebox/value',
  'typebox-compiler': '@sinclair/typebox/compiler',
  webauthn: '@simplewebauthn/server',
  jose: 'jose',
  nodemailer: 'nodemailer',
};
const vendorName = new Map(Object.entries(VENDOR).map(([name, specifier]) => [specifier, name]));

/** The files of src/ that belong to the product (not tests, nor the golden files in their fixtures/ folders), recursively. */
export function sourceFiles(dir = SRC) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : sourceFiles(p);
    return e.name.endsWith('.test.ts') ? [] : [p];
  });
}

/** Whether dist/ is missing or older than a file of src/ (a copy shipped without src/ is never stale). */
export function buildIsStale() {
  let built;
  try {
    built = fs.statSync(STAMP).mtimeMs;
  } catch {
    return true;
  }
  return fs.existsSync(SRC) && sourceFiles().some((f) => fs.statSync(f).mtimeMs > built);
}

/**
 * Keeps every import of a compiled file an import (no source file is inlined into another), pointing the
 * VENDOR packages at their bundle in dist/vendor/.
 */
function importsStayImports(outdir) {
  return {
    name: 'imports-stay-imports',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const name = vendorName.get(args.path);
        if (name === undefined) return { path: args.path, external: true };
        const from = path.join(outdir, path.relative(SRC, path.dirname(args.importer)));
        const relative = path.relative(from, path.join(outdir, 'vendor', `${name}.js`));
        return { path: relative.startsWith('.') ? relative : `./${relative}`, external: true };
      });
    },
  };
}

/** Builds into a fresh folder, then puts it in place of dist/ (a run starting meanwhile sees whole builds). */
export async function buildServer() {
  const started = new Date();
  const files = sourceFiles();
  const tmp = `${DIST}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await compile(files, tmp);
    // The build is as new as the sources it read: a file saved while it ran makes it stale.
    fs.utimesSync(path.join(tmp, '.built'), started, started);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  fs.rmSync(DIST, { recursive: true, force: true });
  try {
    fs.renameSync(tmp, DIST);
  } catch (e) {
    // Another build put its dist/ in place first: built from the same sources, so keep that one.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(STAMP)) throw e;
  }
  return files.length;
}

/** The vendor bundles, the compiled sources and the files beside them, into `out`. */
async function compile(files, out) {
  const esbuild = await import('esbuild');
  const common = { format: 'esm', platform: 'node', target: 'node20', sourcemap: true, sourcesContent: false, logLevel: 'warning', bundle: true, metafile: true };
  const vendor = await esbuild.build({ ...common, entryPoints: VENDOR, outdir: path.join(out, 'vendor'), splitting: true });
  // A package that needs require() at run time cannot be bundled into an ES module: say which, at build time.
  for (const file of Object.keys(vendor.metafile.outputs).filter((f) => f.endsWith('.js'))) {
    if (fs.readFileSync(path.resolve(file), 'utf8').includes('Dynamic require of')) throw new Error(`${file} calls require(): take its package out of VENDOR in scripts/build.mjs`);
  }
  await esbuild.build({ ...common, entryPoints: files.filter((f) => f.endsWith('.ts')), outdir: out, outbase: SRC, plugins: [importsStayImports(out)] });
  // Files the code reads beside itself (the SQLite read worker, the common-password list).
  for (const f of files.filter((f) => !f.endsWith('.ts'))) {
    const to = path.join(out, path.relative(SRC, f));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(f, to);
  }
  fs.writeFileSync(path.join(out, '.built'), '');
}

if (process.argv[1] === import.meta.filename) {
  const started = Date.now();
  try {
    const n = await buildServer();
    console.log(`built dist/ from ${n} files of src/ in ${Date.now() - started} ms`);
  } catch (e) {
    // esbuild has printed what failed and where.
    console.error(`build failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
    process.exit(1);
  }
}
