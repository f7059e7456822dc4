import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ManifestError, validateManifest, type PluginManifest } from './manifest.js';

export type Layer = 'factory' | 'installed';

/** One version folder of a plugin on disk, with its validated manifest. */
export interface PluginPackage {
  manifest: PluginManifest;
  layer: Layer;
  dir: string;
  hasIcon: boolean;
  /** The imported entry module, once loaded to run. */
  module?: Record<string, unknown>;
}

export interface ScanResult {
  packages: PluginPackage[];
  /** `<key>@<version>` (folder names) → why the folder was not loaded. */
  errors: Record<string, string>;
}

/** The plugins shipped in the repository (the factory layer). */
export const FACTORY_DIR = path.resolve(import.meta.dirname, '../../../plugins');
const MAX_MANIFEST_BYTES = 256 * 1024;

function readJson(file: string): unknown {
  const stat = fs.statSync(file);
  if (stat.size > MAX_MANIFEST_BYTES) throw new ManifestError(`${path.basename(file)} is larger than ${MAX_MANIFEST_BYTES} bytes`);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    throw new ManifestError(`${path.basename(file)} is not valid JSON`);
  }
}

/** plugin.json, or an npm package on disk whose package.json carries the manifest under `taskPlugin`. */
function readManifest(dir: string): PluginManifest {
  const pluginJson = path.join(dir, 'plugin.json');
  if (fs.existsSync(pluginJson)) {
    const m = validateManifest(readJson(pluginJson));
    if (!m.entry.endsWith('.mjs')) throw new ManifestError('manifest /entry: a plugin.json package needs an .mjs entry');
    return m;
  }
  const packageJson = path.join(dir, 'package.json');
  if (!fs.existsSync(packageJson)) throw new ManifestError('no plugin.json or package.json');
  const pkg = readJson(packageJson) as Record<string, unknown>;
  if (!pkg || typeof pkg !== 'object' || !pkg.taskPlugin || typeof pkg.taskPlugin !== 'object') throw new ManifestError('package.json has no taskPlugin field');
  const entry = (pkg.taskPlugin as { entry?: unknown }).entry ?? pkg.main ?? 'index.js';
  const m = validateManifest({ ...(pkg.taskPlugin as object), version: pkg.version, entry });
  if (m.entry.endsWith('.js') && pkg.type !== 'module') throw new ManifestError('package.json: a .js entry needs "type": "module"');
  return m;
}

/** The entry file, which must exist inside the version folder (symbolic links included). */
export function entryFile(pkg: PluginPackage): string {
  const root = fs.realpathSync(pkg.dir);
  const file = fs.realpathSync(path.join(pkg.dir, pkg.manifest.entry));
  if (!file.startsWith(root + path.sep)) throw new ManifestError('manifest /entry: resolves outside the version folder');
  return file;
}

/** Reads every `<root>/<key>/<version>/` folder of one layer; broken ones are reported, not loaded. */
export function scanLayer(root: string, layer: Layer, out: ScanResult) {
  if (!fs.existsSync(root)) return;
  for (const keyDir of fs.readdirSync(root, { withFileTypes: true })) {
    if (!keyDir.isDirectory() || keyDir.name.startsWith('.')) continue;
    for (const versionDir of fs.readdirSync(path.join(root, keyDir.name), { withFileTypes: true })) {
      if (!versionDir.isDirectory() || versionDir.name.startsWith('.')) continue;
      const dir = path.join(root, keyDir.name, versionDir.name);
      const label = `${keyDir.name}@${versionDir.name}`;
      try {
        const manifest = readManifest(dir);
        if (manifest.key !== keyDir.name || manifest.version !== versionDir.name) {
          throw new ManifestError(`folder ${keyDir.name}/${versionDir.name} holds ${manifest.key}@${manifest.version}: the folders must be named <key>/<version>`);
        }
        const hasIcon = ['icon.svg', 'icon.png'].some((f) => fs.existsSync(path.join(dir, f)));
        const pkg: PluginPackage = { manifest, layer, dir, hasIcon };
        entryFile(pkg);
        out.packages.push(pkg);
      } catch (e) {
        out.errors[label] = e instanceof ManifestError ? e.message : `cannot read the plugin folder (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
      }
    }
  }
}

export function scanPlugins(dirs: { factory: string | null; installed: string | null }): ScanResult {
  const out: ScanResult = { packages: [], errors: {} };
  if (dirs.factory) scanLayer(dirs.factory, 'factory', out);
  if (dirs.installed) scanLayer(dirs.installed, 'installed', out);
  return out;
}

function parts(v: string) {
  const [core, pre] = v.split(/-(.*)/s) as [string, string | undefined];
  return { nums: core.split('.').map(Number), pre };
}

/** Semantic version order (a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return x.nums[i]! - y.nums[i]!;
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** Per key, the version that runs: the highest; an installed copy of a version wins over the factory one. */
export function activePackages(packages: PluginPackage[]): Map<string, PluginPackage> {
  const out = new Map<string, PluginPackage>();
  for (const p of packages) {
    const cur = out.get(p.manifest.key);
    const c = cur ? compareVersions(p.manifest.version, cur.manifest.version) : 1;
    if (c > 0 || (c === 0 && p.layer === 'installed')) out.set(p.manifest.key, p);
  }
  return out;
}

/** Imports the entry module and checks it exports every handler the manifest names. */
export async function importEntry(pkg: PluginPackage): Promise<Record<string, unknown>> {
  const mod = (await import(pathToFileURL(entryFile(pkg)).href)) as Record<string, unknown>;
  for (const r of pkg.manifest.routes) {
    if (typeof mod[r.handler] !== 'function') throw new ManifestError(`entry ${pkg.manifest.entry} does not export a function ${r.handler}`);
  }
  pkg.module = mod;
  return mod;
}
