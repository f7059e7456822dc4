import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { buildManifest } from '../../src/contract/manifest.js';
import { gatewayOperations } from '../../src/gateway/app.js';
import { eachDatabase, tempDir } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { HOLDING_SOURCE, taskManifest, writePlugin } from '../helpers/plugins.js';

const ECHO = '/api/task/example-echo-video';
const SECRET = 'sk-plugin-SECRET-0123456789';

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

eachDatabase('task plugins', (v) => {
  let s: GatewayServer;
  let dir: string;
  let root: StaffClient;
  let alice: StaffClient;
  let bob: StaffClient;
  const held: string[] = [];

  before(async () => {
    dir = tempDir('gw-plugins-');
    writePlugin(dir, taskManifest('second-video', '1.0.0'), HOLDING_SOURCE);
    writePlugin(dir, taskManifest('second-video', '1.1.0', { sortPriority: 5, description: 'second', baseUrl: 'https://video.example.com' }), HOLDING_SOURCE);
    writePlugin(dir, taskManifest('pkg-video', '2.0.0'), HOLDING_SOURCE, 'npm');
    writePlugin(dir, { ...taskManifest('broken', '0.1.0'), surprise: true }, HOLDING_SOURCE);
    writePlugin(dir, taskManifest('half-video', '1.0.0'), 'export async function submit() {}');
    s = await startGateway(v, { env: { GATEWAY_PLUGIN_DIR: dir, GATEWAY_PLUGIN_MAX_IN_FLIGHT: '3' } });
    root = await s.staff('root', 'root');
    alice = await s.staff('alice', 'admin');
    bob = await s.staff('bob', 'admin');
  });
  after(async () => {
    assert.ok(!s.everything().includes(SECRET), 'a plugin error message leaked');
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the shipped example starts disabled; G72 enables it; G77 reports it', async () => {
    const off = await alice.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'hi' });
    assert.equal(off.status, 409, off.text);
    assert.equal(off.json.code, 'TASK_PLUGIN_DISABLED');
    const st = (await root.get('/api/plugin/task/runtime/status')).json.data;
    assert.equal(st.plugins.find((p: any) => p.key === 'example-echo-video').runtime_status, 'disabled');
    const on = await root.post('/api/plugin/task/example-echo-video/status', { enabled: true });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.data.plugin_enabled, true);
    const st2 = (await root.get('/api/plugin/task/runtime/status')).json.data;
    assert.equal(st2.plugins.find((p: any) => p.key === 'example-echo-video').runtime_status, 'registered');
  });

  test('a task runs for its owner: submit, poll until it succeeds; other identities cannot see it, root can', async () => {
    const r = await alice.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'a cat', duration_ms: 30 });
    assert.equal(r.status, 200, r.text);
    const id = r.json.data.task_id;
    assert.match(id, /^task_/);
    assert.equal(r.json.data.plugin, 'example-echo-video');
    const done = await until(() => alice.get(`${ECHO}/tasks/${id}`), (x) => x.json?.data?.status === 'succeeded');
    assert.equal(done.json.data.status, 'succeeded', done.text);
    assert.equal(done.json.data.result.video_url, `echo://${id}.mp4`);
    assert.equal(done.json.data.progress, 100);
    for (const c of [bob]) {
      const g = await c.get(`${ECHO}/tasks/${id}`);
      assert.equal(g.status, 404);
      assert.equal(g.json.code, 'TASK_PLUGIN_TASK_NOT_FOUND');
      assert.equal((await c.post(`${ECHO}/tasks/${id}/cancel`)).status, 404);
    }
    assert.equal((await root.get(`${ECHO}/tasks/${id}`)).json.data.status, 'succeeded');
    // A task of another plugin is not reachable through this one's routes.
    assert.equal((await alice.get(`/api/task/second-video/tasks/${id}`)).status, 404);
    assert.equal((await alice.get(`${ECHO}/tasks/task_nope`)).status, 404);
    const row = await s.ctx.db.selectFrom('task_plugin_tasks').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.owner_name, 'alice');
    assert.equal(row.plugin_version, '1.0.0');
  });

  test('GS03 lists the tasks of every plugin, newest first, with filters; /api/task/ answers the same without a redirect', async () => {
    const a = await alice.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'listed one', duration_ms: 1 });
    const b = await bob.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'listed two', duration_ms: 1 });
    // Both finished first, so the two reads compared below see the same rows.
    for (const [c, r] of [[alice, a], [bob, b]] as const) {
      await until(() => c.get(`${ECHO}/tasks/${r.json.data.task_id}`), (x) => x.json?.data?.status === 'succeeded');
    }
    const all = await alice.get('/api/task?plugin=example-echo-video&page_size=100');
    assert.equal(all.status, 200, all.text);
    const ids = all.json.data.items.map((t: any) => t.task_id);
    assert.ok(ids.indexOf(b.json.data.task_id) < ids.indexOf(a.json.data.task_id), 'newest first');
    assert.equal(all.json.data.total, ids.length);
    const mine = all.json.data.items.find((t: any) => t.task_id === a.json.data.task_id);
    assert.equal(mine.owner, 'alice');
    assert.equal(mine.plugin, 'example-echo-video');
    assert.equal(mine.input.prompt, 'listed one');
    const bobs = await alice.get('/api/task?owner=bob');
    assert.deepEqual(bobs.json.data.items.map((t: any) => t.owner), bobs.json.data.items.map(() => 'bob'));
    assert.ok(bobs.json.data.items.some((t: any) => t.task_id === b.json.data.task_id));
    const page = await alice.get('/api/task?plugin=example-echo-video&page_size=1&p=2');
    assert.deepEqual(page.json.data.items.map((t: any) => t.task_id), [ids[1]]);
    assert.equal(page.json.data.page, 2);
    // The reference documents GET /api/task/ with a trailing slash: the same list, not a redirect.
    const slash = await alice.get('/api/task/?plugin=example-echo-video&page_size=100');
    assert.equal(slash.status, 200);
    assert.deepEqual(slash.json.data, all.json.data);
    assert.equal((await alice.get('/api/task?status=done')).status, 400);
    assert.equal((await alice.get('/api/task?page_size=101')).status, 400);
    assert.equal((await s.anonymous().get('/api/task')).json.code, 'GW_UNAUTHORIZED');
  });

  test('authentication and auth classes apply to plugin routes', async () => {
    assert.equal((await s.anonymous().post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'x' })).json.code, 'GW_UNAUTHORIZED');
    const svc = await s.staff('svc', 'service', { grant: ['authz.ChannelRead'] });
    assert.equal((await svc.get(`${ECHO}/models`)).json.code, 'GW_STAFF_REQUIRED');
    assert.deepEqual((await alice.get(`${ECHO}/models`)).json.data, ['echo-video-1']);
    assert.equal((await alice.get('/api/task/second-video/whoami')).json.code, 'GW_ROOT_REQUIRED');
    assert.equal((await root.get('/api/task/second-video/whoami')).json.data.name, 'root');
  });

  test('cancel: the owner cancels a running task once; a finished task cannot be cancelled', async () => {
    const r = await alice.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'hold', hold: true });
    const id = r.json.data.task_id;
    assert.equal(r.json.data.status, 'running');
    const c = await alice.post(`${ECHO}/tasks/${id}/cancel`);
    assert.equal(c.status, 200, c.text);
    assert.equal(c.json.data.status, 'cancelled');
    const again = await alice.post(`${ECHO}/tasks/${id}/cancel`);
    assert.equal(again.status, 409);
    assert.equal(again.json.code, 'TASK_PLUGIN_TASK_FINISHED');
  });

  test('budget: at most GATEWAY_PLUGIN_MAX_IN_FLIGHT tasks per identity, checked before the plugin runs', async () => {
    const carol = await s.staff('carol', 'admin');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await carol.post('/api/task/second-video/submit', { prompt: `p${i}` });
      assert.equal(r.status, 200, r.text);
      ids.push(r.json.data.task_id);
    }
    const refused = await carol.post('/api/task/second-video/submit', { prompt: 'p4' });
    assert.equal(refused.status, 429);
    assert.equal(refused.json.code, 'TASK_PLUGIN_BUDGET_EXCEEDED');
    const rows = await s.ctx.db.selectFrom('task_plugin_tasks').select('task_id').where('owner_name', '=', 'carol').execute();
    assert.equal(rows.length, 3, 'the refused request created no task');
    // The cap counts every plugin together; another identity is not affected.
    assert.equal((await carol.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: 'x', hold: true })).status, 429);
    assert.equal((await bob.post('/api/task/second-video/submit', { prompt: 'bob' })).status, 200);
    assert.equal((await carol.post(`/api/task/second-video/tasks/${ids[0]}/cancel`)).status, 200);
    const fourth = await carol.post('/api/task/second-video/submit', { prompt: 'p5' });
    assert.equal(fourth.status, 200);
    held.push(ids[1]!, ids[2]!, fourth.json.data.task_id);
    // Concurrent submissions cannot overrun the cap.
    const dave = await s.staff('dave', 'admin');
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => dave.post('/api/task/pkg-video/submit', { prompt: `c${i}` })));
    assert.equal(all.filter((r) => r.status === 200).length, 3, all.map((r) => r.status).join());
    assert.equal(all.filter((r) => r.status === 429).length, 3);
  });

  test('bad input to plugin routes: clear 4xx envelopes, and a failing plugin fails its task without leaking', async () => {
    const count = async () => (await s.ctx.db.selectFrom('task_plugin_tasks').select('task_id').where('owner_name', '=', 'bob').execute()).length;
    const before = await count();
    const cases: [unknown, number, string][] = [
      [{}, 400, 'INVALID_PARAMETERS'],
      [{ prompt: 5 }, 400, 'INVALID_PARAMETERS'],
      [{ prompt: 'x', extra: 1 }, 400, 'INVALID_PARAMETERS'],
      [{ prompt: 'x'.repeat(101) }, 400, 'INVALID_PARAMETERS'],
      ['{"prompt":', 400, 'INVALID_JSON'],
      [{ prompt: 'x'.repeat(400_000) }, 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [body, status, code] of cases) {
      const r = await bob.post('/api/task/second-video/submit', body);
      assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 40)}: ${r.text}`);
      assert.equal(r.json.code, code);
    }
    assert.equal(await count(), before, 'no task for refused input');
    const blank = await bob.post(`${ECHO}/submit`, { model: 'echo-video-1', prompt: '  ' });
    assert.equal(blank.status, 400);
    assert.equal(blank.json.code, 'TASK_PLUGIN_REJECTED');
    assert.equal((await bob.post(`${ECHO}/submit`, { model: 'other', prompt: 'x' })).status, 400);
    const boom = await bob.post('/api/task/second-video/submit', { prompt: 'x', boom: true });
    assert.equal(boom.status, 502);
    assert.equal(boom.json.code, 'TASK_PLUGIN_FAILED');
    const failed = await s.ctx.db.selectFrom('task_plugin_tasks').select('status').where('owner_name', '=', 'bob').where('status', '=', 'failed').execute();
    assert.equal(failed.length, 2, 'the rejected and the failed task are recorded as failed (they no longer count)');
  });

  test('an npm package on disk is a plugin too', async () => {
    const r = await root.post('/api/task/pkg-video/submit', { prompt: 'npm' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.version, '2.0.0');
  });

  test('G72: bound channels need cascade, in-flight tasks need force; then the routes answer disabled', async () => {
    const ids: number[] = [];
    for (const name of ['bound-a', 'bound-b']) {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, key: 'k-' + name, models: 'second-video-model', setting: JSON.stringify({ task_plugin_key: 'second-video' }) } });
      assert.equal(r.status, 200, r.text);
      ids.push(r.json.data.ids[0]);
    }
    await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'other', key: 'k-other', models: 'm', setting: JSON.stringify({ task_plugin_key: 'pkg-video' }) } });
    const plain = await root.post('/api/plugin/task/second-video/status', { enabled: false });
    assert.equal(plain.status, 409, plain.text);
    assert.equal(plain.json.code, 'TASK_PLUGIN_IN_USE');
    assert.equal(plain.json.data.plugin_enabled, true);
    assert.deepEqual(plain.json.data.channels.map((c: any) => c.id), ids);
    assert.ok(plain.json.data.in_flight_count >= 3, plain.text);
    const noForce = await root.post('/api/plugin/task/second-video/status?cascade=true', { enabled: false });
    assert.equal(noForce.json.code, 'TASK_PLUGIN_IN_USE');
    assert.equal((await root.get(`/api/channel/${ids[0]}`)).json.data.status, 1, 'a refused disable changes nothing');
    assert.equal((await alice.post('/api/task/second-video/submit', { prompt: 'still on' })).status, 200);
    const done = await root.post('/api/plugin/task/second-video/status?cascade=true&force=true', { enabled: false });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.json.data.plugin_enabled, false);
    assert.equal(done.json.data.disabled_channels, 2);
    assert.deepEqual(done.json.data.channels.map((c: any) => c.status), [2, 2]);
    assert.ok(done.json.data.in_flight_count >= 4);
    for (const id of ids) assert.equal((await root.get(`/api/channel/${id}`)).json.data.status, 2);
    const off = await alice.post('/api/task/second-video/submit', { prompt: 'off' });
    assert.equal(off.status, 409);
    assert.equal(off.json.code, 'TASK_PLUGIN_DISABLED');
    assert.equal((await alice.get(`/api/task/second-video/tasks/${held[0]}`)).json.code, 'TASK_PLUGIN_DISABLED');
    const audit = await s.ctx.db.selectFrom('gateway_audit').select('detail').where('operation', '=', 'G72').execute();
    assert.ok(audit.some((a) => a.detail.includes('"task_plugin_key":"second-video"')));
    // Re-enabling leaves the channels as they are.
    const again = await root.post('/api/plugin/task/second-video/status', { enabled: true });
    assert.equal(again.json.data.plugin_enabled, true);
    assert.equal(again.json.data.disabled_channels, 0);
    assert.equal((await alice.get(`/api/task/second-video/tasks/${held[0]}`)).status, 404, 'alice does not own carol\'s task');
    // Bad input and unknown plugins.
    assert.equal((await root.post('/api/plugin/task/nope-plugin/status', { enabled: false })).json.code, 'TASK_PLUGIN_NOT_FOUND');
    assert.equal((await root.post('/api/plugin/task/second-video/status', {})).json.code, 'INVALID_PARAMETERS');
    assert.equal((await root.post('/api/plugin/task/second-video/status', { enabled: 'no' })).status, 400);
    assert.equal((await root.post('/api/plugin/task/Bad_Key/status', { enabled: true })).status, 400);
    assert.equal((await alice.post('/api/plugin/task/second-video/status', { enabled: false })).json.code, 'GW_ROOT_REQUIRED');
  });

  test('G73 lists the installed versions; G74 deletes one (force with tasks in flight), the running one at the next start', async () => {
    const list = await root.get('/api/plugin/task/second-video/versions');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.data.map((x: any) => [x.version, x.layer, x.running, x.active]), [['1.1.0', 'installed', true, true], ['1.0.0', 'installed', false, false]]);
    assert.ok(list.json.data[0].in_flight_count >= 4);
    assert.equal((await root.get('/api/plugin/task/example-echo-video/versions')).json.data[0].layer, 'factory');
    assert.equal((await root.get('/api/plugin/task/nope-plugin/versions')).status, 404);

    const old = await root.delete('/api/plugin/task/second-video/versions/1.0.0');
    assert.equal(old.status, 200, old.text);
    assert.equal(old.json.data.restart_required, false);
    assert.ok(!fs.existsSync(path.join(dir, 'second-video', '1.0.0')));
    assert.equal((await root.delete('/api/plugin/task/second-video/versions/1.0.0')).json.code, 'TASK_PLUGIN_VERSION_NOT_FOUND');
    assert.equal((await root.delete('/api/plugin/task/second-video/versions/1.0')).status, 400);
    assert.equal((await root.delete('/api/plugin/task/example-echo-video/versions/1.0.0')).json.code, 'TASK_PLUGIN_VERSION_FACTORY');

    const busy = await root.delete('/api/plugin/task/second-video/versions/1.1.0');
    assert.equal(busy.status, 409);
    assert.equal(busy.json.code, 'TASK_PLUGIN_VERSION_IN_USE');
    assert.equal(busy.json.data.channels.length, 2);
    const inFlight = busy.json.data.in_flight_count;
    assert.ok(inFlight >= 4);
    const forced = await root.delete('/api/plugin/task/second-video/versions/1.1.0?force=true');
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.json.data.failed_tasks, inFlight);
    assert.equal(forced.json.data.restart_required, true);
    const st = (await root.get('/api/plugin/task/runtime/status')).json.data;
    assert.equal(st.restart_required, true);
    assert.deepEqual(st.pending, [{ key: 'second-video', running_version: '1.1.0', installed_version: null }]);
    // The running module keeps serving until the restart; its failed tasks stay failed.
    assert.equal((await root.get(`/api/task/second-video/tasks/${held[0]}`)).json.data.status, 'failed');
    assert.equal((await alice.delete('/api/plugin/task/pkg-video/versions/2.0.0')).json.code, 'GW_ROOT_REQUIRED');
  });

  test('G75/G76 marketplace sources: validated, stored as an option, explicit [] clears', async () => {
    assert.deepEqual((await root.get('/api/plugin/task/marketplace/sources')).json.data, []);
    const good = [{ name: ' Official ', index_url: ' https://plugins.example.com/index.json ' }, { name: 'local', index_url: '/srv/plugins' }];
    const put = await root.put('/api/plugin/task/marketplace/sources', good);
    assert.equal(put.status, 200, put.text);
    const want = [{ name: 'Official', index_url: 'https://plugins.example.com/index.json' }, { name: 'local', index_url: '/srv/plugins' }];
    assert.deepEqual(put.json.data, want);
    assert.deepEqual((await root.get('/api/plugin/task/marketplace/sources')).json.data, want);
    const bad: unknown[] = [
      [{ name: ' ', index_url: 'https://a.example' }],
      [{ name: 'a', index_url: 'plugins.example.com/index.json' }],
      [{ name: 'a', index_url: 'ftp://a.example/x' }],
      [{ name: 'a', index_url: 'https://user:pw-SECRET@a.example/x' }],
      [{ name: 'a', index_url: 'relative/folder' }],
      [{ name: 'a', index_url: '/srv/../etc' }],
      [{ name: 'a', index_url: 'https://a.example' }, { name: 'A', index_url: 'https://b.example' }],
      Array.from({ length: 17 }, (_, i) => ({ name: `s${i}`, index_url: 'https://a.example' })),
    ];
    for (const body of bad) {
      const r = await root.put('/api/plugin/task/marketplace/sources', body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.code, 'TASK_PLUGIN_SOURCES_INVALID', r.text);
      assert.ok(!r.text.includes('pw-SECRET'));
    }
    for (const body of [{ name: 'x' }, [{ name: 'x' }], [{ name: 'x', index_url: 5 }], '[{']) {
      const r = await root.put('/api/plugin/task/marketplace/sources', body);
      assert.equal(r.status, 400, r.text);
    }
    assert.deepEqual((await root.get('/api/plugin/task/marketplace/sources')).json.data, want, 'refused writes change nothing');
    assert.deepEqual((await root.put('/api/plugin/task/marketplace/sources', [])).json.data, []);
    const row = await s.ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', 'option:task_plugin_marketplace_sources').executeTakeFirstOrThrow();
    assert.equal(row.value, '[]');
    assert.equal((await alice.get('/api/plugin/task/marketplace/sources')).json.code, 'GW_ROOT_REQUIRED');
  });

  test('G77 reports the load errors of broken plugins without blocking start', async () => {
    const st = (await root.get('/api/plugin/task/runtime/status')).json.data;
    assert.equal(st.last_rebuild.status, 'partial');
    assert.equal(st.current_generation, 1);
    assert.match(st.plugin_errors['broken@0.1.0'], /surprise|additional/i);
    assert.match(st.plugin_errors['half-video@1.0.0'], /does not export a function get/);
    assert.equal(st.last_rebuild.plugin_error_count, 2);
    assert.equal((await root.post('/api/task/half-video/submit', { prompt: 'x' })).json.code, 'NOT_FOUND', 'a plugin that failed to load serves nothing');
    assert.deepEqual(st.plugins.map((p: any) => p.key), ['example-echo-video', 'pkg-video', 'second-video']);
  });

  test('G84 lists the enabled plugins with the option keys, for holders of TaskPluginBind only', async () => {
    assert.equal((await alice.get('/api/task_plugin_options')).json.code, 'GW_FORBIDDEN');
    const binder = await s.staff('binder', 'admin', { grant: ['authz.TaskPluginBind'] });
    const r = await binder.get('/api/task_plugin_options');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data.map((o: any) => o.key), ['second-video', 'example-echo-video', 'pkg-video']);
    const keys = ['key', 'name', 'description', 'website', 'baseUrl', 'icon', 'hasIcon', 'models', 'channelTypes', 'sortPriority', 'usageProfiles', 'usageSchema'];
    for (const k of keys) assert.ok(k in r.json.data[0], k);
    assert.equal(r.json.data[0].baseUrl, 'https://video.example.com');
    assert.deepEqual(r.json.data[1].models, ['echo-video-1']);
    assert.deepEqual(r.json.data[0].channelTypes, [1]);
    await root.post('/api/plugin/task/pkg-video/status?force=true&cascade=true', { enabled: false });
    assert.deepEqual((await binder.get('/api/task_plugin_options')).json.data.map((o: any) => o.key), ['second-video', 'example-echo-video']);
  });

  test('the route manifest and /api/openapi.json list plugin routes with plugin, version, metering, state and cancel capability', async () => {
    const manifest = buildManifest(gatewayOperations(loadConfig({ DATA_DIR: s.dataDir, GATEWAY_PLUGIN_DIR: dir })));
    const submit = manifest.find((m) => m.path === '/api/task/pkg-video/submit')!;
    assert.equal(submit.operation, 'plugin:pkg-video:1');
    assert.equal(submit.plugin, 'pkg-video');
    assert.equal(submit.version, '2.0.0');
    assert.equal(submit.metering, 'per_task');
    assert.equal(submit.cancellable, true);
    assert.equal(submit.auth, 'admin');
    assert.deepEqual(submit.fields.map((f) => `${f.in}:${f.name}:${f.required}`), ['body:prompt:true', 'body:boom:false']);
    assert.equal(manifest.find((m) => m.path === '/api/task/pkg-video/tasks/:task_id/cancel')!.cancellable, true);
    assert.equal(manifest.find((m) => m.path === '/api/task/pkg-video/whoami')!.auth, 'root');
    assert.ok(!manifest.some((m) => m.plugin === 'broken'));
    const doc = (await s.anonymous().get('/api/openapi.json')).json;
    const op = doc.paths['/api/task/example-echo-video/tasks/{task_id}/cancel'].post;
    assert.equal(op['x-plugin'], 'example-echo-video');
    assert.equal(op['x-plugin-version'], '1.0.0');
    assert.equal(op['x-cancellable'], true);
    assert.equal(op['x-state'], 'implemented', 'enabled earlier through G72');
    assert.equal(doc.paths['/api/task/pkg-video/submit'].post['x-state'], 'disabled');
    assert.equal(doc.paths['/api/task/pkg-video/submit'].post['x-metering'], 'per_task');
  });
});
