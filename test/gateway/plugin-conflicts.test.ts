import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { createRuntime } from '../../src/runtime.js';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { captureLog } from '../helpers/log-capture.js';
import { eachDatabase, freshDatabase, tempDir, type Variant } from '../helpers/services.js';
import { HOLDING_SOURCE, taskManifest, writePlugin } from '../helpers/plugins.js';

/** Builds a gateway on the variant's database with the given plugin folder; returns the start error. */
async function startError(v: Variant, setup: (dir: string) => void): Promise<Error | null> {
  const dataDir = tempDir('gw-conflict-');
  const pluginDir = `${dataDir}/plugins`;
  setup(pluginDir);
  const database = freshDatabase(v, `${dataDir}/gateway.sqlite`);
  const config = loadConfig({ DATA_DIR: dataDir, GATEWAY_PLUGIN_DIR: pluginDir, GATEWAY_DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
  const runtime = createRuntime(config, captureLog().stream);
  try {
    const { app } = await buildGatewayApp(config, runtime);
    await app.close();
    return null;
  } catch (e) {
    return e as Error;
  } finally {
    await runtime.close();
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

function samePath(key: string, path: string, method = 'POST') {
  const m = taskManifest(key, '1.0.0');
  m.routes[0] = { ...m.routes[0], path, method } as never;
  return m;
}

eachDatabase('task plugin route conflicts block start', (v) => {
  test('two plugins on one path: the error names both plugins and versions', async () => {
    const e = await startError(v, (dir) => {
      writePlugin(dir, samePath('alpha-video', '/api/task/shared/submit'), HOLDING_SOURCE);
      writePlugin(dir, samePath('beta-video', '/api/task/shared/submit'), HOLDING_SOURCE);
    });
    assert.ok(e, 'start must fail');
    assert.match(e.message, /route conflict: plugin:beta-video:1 \(task plugin beta-video@1\.0\.0\) and plugin:alpha-video:1 \(task plugin alpha-video@1\.0\.0\) both register POST \/api\/task\/shared\/submit/);
  });

  test('a plugin on a built-in route (parameter names aside): the error names the operation and the plugin', async () => {
    const e = await startError(v, (dir) => {
      const m = samePath('evil-video', '/api/channel/:channel', 'GET');
      m.routes[0]!.fields = [{ in: 'path', name: 'channel', type: 'string', maxLength: 10 }] as never;
      delete (m.routes[0] as any).task;
      delete (m.routes[0] as any).metering;
      writePlugin(dir, m, HOLDING_SOURCE);
    });
    assert.ok(e, 'start must fail');
    assert.match(e.message, /route conflict: plugin:evil-video:1 \(task plugin evil-video@1\.0\.0\) and G05 both register GET \/api\/channel\/:channel/);
  });

  test('a plugin on the shipped example\'s path conflicts with it; without conflicts the gateway starts', async () => {
    const e = await startError(v, (dir) => writePlugin(dir, samePath('copy-video', '/api/task/example-echo-video/submit'), HOLDING_SOURCE));
    assert.match(e?.message ?? '', /plugin:example-echo-video:1 \(task plugin example-echo-video@1\.0\.0\)/);
    assert.equal(await startError(v, (dir) => writePlugin(dir, taskManifest('fine-video', '1.0.0'), HOLDING_SOURCE)), null);
  });
});
