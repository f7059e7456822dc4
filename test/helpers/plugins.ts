import fs from 'node:fs';
import path from 'node:path';

/** Writes one plugin version folder: plugin.json + index.mjs, or an npm package (package.json + index.js). */
export function writePlugin(root: string, manifest: Record<string, any>, source: string, layout: 'plugin.json' | 'npm' = 'plugin.json') {
  const dir = path.join(root, manifest.key, manifest.version);
  fs.mkdirSync(dir, { recursive: true });
  if (layout === 'plugin.json') {
    fs.writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify({ entry: 'index.mjs', ...manifest }));
    fs.writeFileSync(path.join(dir, 'index.mjs'), source);
  } else {
    const { version, ...taskPlugin } = manifest;
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `@plugins/${manifest.key}`, version, type: 'module', main: 'index.js', taskPlugin }));
    fs.writeFileSync(path.join(dir, 'index.js'), source);
  }
  return dir;
}

/** A manifest with one task-creating route, a read route and a cancel route under /api/task/<key>/. */
export function taskManifest(key: string, version: string, extra: Record<string, any> = {}) {
  const id = [{ in: 'path', name: 'task_id', type: 'string', maxLength: 64 }];
  return {
    key,
    version,
    apiVersion: 1,
    name: `${key} ${version}`,
    models: [`${key}-model`],
    channelTypes: [1],
    routes: [
      {
        method: 'POST', path: `/api/task/${key}/submit`, summary: 'submit', auth: 'admin', handler: 'submit', task: 'create', metering: 'per_task',
        fields: [{ in: 'body', name: 'prompt', type: 'string', required: true, maxLength: 100 }, { in: 'body', name: 'boom', type: 'boolean' }],
      },
      { method: 'GET', path: `/api/task/${key}/tasks/:task_id`, summary: 'read', auth: 'admin', handler: 'get', task: 'read', fields: id },
      { method: 'POST', path: `/api/task/${key}/tasks/:task_id/cancel`, summary: 'cancel', auth: 'admin', handler: 'cancel', task: 'cancel', fields: id },
      { method: 'GET', path: `/api/task/${key}/whoami`, summary: 'caller', auth: 'root', handler: 'whoami' },
    ],
    ...extra,
  };
}

/** Keeps every task running; `boom` makes the handler throw with a secret-looking message. */
export const HOLDING_SOURCE = `
export async function submit(ctx) {
  if (ctx.body.boom) throw new Error('upstream said sk-plugin-SECRET-0123456789');
  await ctx.task.running();
  return { accepted: true, plugin_version: ctx.plugin.version };
}
export async function get(ctx) { return { seen_by: ctx.identity.name }; }
export async function cancel() { return {}; }
export async function whoami(ctx) { return { id: ctx.identity.id, name: ctx.identity.name, role: ctx.identity.role }; }
`;
