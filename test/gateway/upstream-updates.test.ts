import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { assertAbilitiesConsistent } from './consistency.js';

const KEY = 'sk-updates-SECRET-0123456789abcdef';
const BAD_KEY = 'sk-updates-WRONG-9876543210fedcba';
const ANTHROPIC_KEY = 'sk-ant-updates-SECRET-0123456789';
const GEMINI_KEY = 'AIza-updates-SECRET-0123456789';
const KEYS = [KEY, BAD_KEY, ANTHROPIC_KEY, GEMINI_KEY];

const DETECT = '/api/channel/upstream_updates/detect';
const APPLY = '/api/channel/upstream_updates/apply';
const APPLY_ALL = '/api/channel/upstream_updates/apply_all';
const DETECT_ALL = '/api/channel/upstream_updates/detect_all';

const OPT_IN = { upstream_model_update_check_enabled: true };

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

eachDatabase('gateway upstream model updates (G37–G40)', (v) => {
  let s: GatewayServer;
  let b: GatewayServer;
  let closed: GatewayServer;
  let up: FakeUpstream;
  let root: StaffClient;
  let admin: StaffClient;
  /** Model lists per base path, changed by the tests between calls. */
  const lists: Record<string, string[]> = {};
  let anthropicModels: string[] = [];
  let geminiModels: string[] = [];
  let releaseGate: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();

  const openaiList = (prefix: string) => (r: Seen, res: http.ServerResponse) => {
    const auth = r.headers.authorization ?? '';
    if (auth !== `Bearer ${KEY}`) return sendJson(res, 401, { error: { message: `Incorrect API key provided: ${auth.slice(7)}`, code: 'invalid_api_key' } });
    sendJson(res, 200, { object: 'list', data: (lists[prefix] ?? []).map((id) => ({ id, object: 'model' })) });
  };

  before(async () => {
    const routes: Record<string, (r: Seen, res: http.ServerResponse) => void | Promise<void>> = {
      'GET /v1/models': (r, res) => {
        if (r.headers['x-api-key'] !== undefined) {
          if (r.headers['x-api-key'] !== ANTHROPIC_KEY) return sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
          return sendJson(res, 200, { data: anthropicModels.map((id) => ({ id, type: 'model' })), has_more: false });
        }
        return openaiList('')(r, res);
      },
      'GET /v1beta/models': (r, res) => {
        if (r.headers['x-goog-api-key'] !== GEMINI_KEY) return sendJson(res, 403, { error: { code: 403, message: 'API key not valid' } });
        sendJson(res, 200, { models: geminiModels.map((id) => ({ name: `models/${id}` })) });
      },
      'GET /slow/v1/models': later(3000, (_r, res) => sendJson(res, 200, { data: [] })),
      'GET /gate/v1/models': async (r, res) => {
        await gate;
        openaiList('/gate')(r, res);
      },
    };
    for (const p of ['/a', '/b', '/c', '/d', '/x', '/y', '/sched']) routes[`GET ${p}/v1/models`] = openaiList(p);
    up = await startFakeUpstream(routes);
    const env = { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0' };
    s = await startGateway(v, { env });
    b = await startGateway(v, { env, shareWith: s });
    closed = await startGateway(v, { env: { GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '0' } });
    root = await s.staff('root', 'root');
    admin = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = s.everything() + '\n' + b.everything() + '\n' + closed.everything();
    for (const k of KEYS) assert.ok(!all.includes(k), `key ${k.slice(0, 14)} leaked`);
    await b.close();
    await s.close();
    await closed.close();
    await up.close();
  });

  async function create(channel: Record<string, unknown>, c: StaffClient = root): Promise<number> {
    const body: Record<string, unknown> = { type: 1, key: KEY, group: 'default', ...channel };
    if (body.settings && typeof body.settings !== 'string') body.settings = JSON.stringify(body.settings);
    if (body.model_mapping && typeof body.model_mapping !== 'string') body.model_mapping = JSON.stringify(body.model_mapping);
    const r = await c.post('/api/channel/', { mode: 'single', channel: body });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0];
  }

  async function channel(id: number) {
    const r = await root.get(`/api/channel/${id}`);
    assert.equal(r.status, 200, r.text);
    return { ...r.json.data, settingsJson: JSON.parse(r.json.data.settings || '{}') };
  }

  async function abilityModels(id: number, group = 'default') {
    const rows = await s.ctx.db.selectFrom('abilities').select('model').where('channel_id', '=', id).where('group', '=', group).execute();
    return rows.map((r) => r.model).sort();
  }

  async function writeSettings(id: number, settings: Record<string, unknown>, models?: string) {
    const r = await root.put('/api/channel/', { id, settings: JSON.stringify(settings), ...(models ? { models } : {}) });
    assert.equal(r.status, 200, r.text);
  }

  test('G39 stages adds and removes: mapping targets and aliases, ignored names and patterns, unusable names', async () => {
    lists['/a'] = ['gpt-4o', 'gpt-4o-mini', 'gpt-5', 'o3-mini', 'o3-pro', 'dall-e-3', 'real-target', 'GPT-IMAGE-1', 'x'.repeat(300), 'a,b', 'a'.repeat(200) + '!'];
    const id = await create({
      name: 'detect-a',
      base_url: up.url + '/a',
      models: 'gpt-4o,old-model,alias-model',
      model_mapping: { 'alias-model': 'real-target' },
      settings: {
        ...OPT_IN,
        other_setting: 'kept',
        // Exact, patterns (case-insensitive flag as in Go), a pattern that does not compile, one too long, and a
        // pattern that backtracks exponentially in a backtracking engine.
        upstream_model_update_ignored_models: ['dall-e-3', 'regex:^o3-', 'regex:(?i)^gpt-image', 'regex:([bad', 'regex:' + 'z'.repeat(600), 'regex:(a+)+$'],
      },
    });
    const started = Date.now();
    const r = await admin.post(DETECT, { id });
    assert.equal(r.status, 200, r.text);
    assert.ok(Date.now() - started < 3000, 'a pattern stalled the detection');
    const d = r.json.data;
    assert.equal(d.channel_id, id);
    assert.equal(d.channel_name, 'detect-a');
    assert.deepEqual(d.add_models, ['gpt-4o-mini', 'gpt-5', 'a'.repeat(200) + '!']);
    assert.deepEqual(d.remove_models, ['old-model']);
    assert.equal(d.auto_added_models, 0);
    assert.ok(d.last_check_time > 0);
    const c = await channel(id);
    assert.equal(c.models, 'gpt-4o,old-model,alias-model', 'detection alone changes no model');
    assert.equal(c.settingsJson.other_setting, 'kept');
    assert.deepEqual(c.settingsJson.upstream_model_update_last_detected_models, d.add_models);
    assert.deepEqual(c.settingsJson.upstream_model_update_last_removed_models, ['old-model']);
    assert.equal(c.settingsJson.upstream_model_update_last_check_time, d.last_check_time);
    assert.equal(c.settingsJson.upstream_model_update_ignored_models.length, 6, 'ignored entries are kept as written');

    // The upstream changes: the staged lists follow it.
    lists['/a'] = ['gpt-4o', 'gpt-6', 'old-model'];
    const again = await admin.post(DETECT, { id, add_models: ['ignored by G39'] });
    assert.deepEqual(again.json.data.add_models, ['gpt-6']);
    assert.deepEqual(again.json.data.remove_models, []);
    const audit = await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', '=', 'G39').where('channel_id', '=', id).execute();
    assert.equal(audit.length, 2);
    assert.equal(JSON.parse(audit[1]!.detail).add, 1);
  });

  test('G39 on Anthropic and Gemini upstreams; auto-sync adds at once and leaves removals staged', async () => {
    anthropicModels = ['claude-sonnet-4', 'claude-opus-4', 'claude-old'];
    const claude = await create({ type: 14, key: ANTHROPIC_KEY, name: 'claude', base_url: up.url, group: 'default,vip', models: 'claude-old,claude-gone', settings: { ...OPT_IN, upstream_model_update_auto_sync_enabled: true } });
    const r = await admin.post(DETECT, { id: claude });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.auto_added_models, 2);
    assert.deepEqual(r.json.data.add_models, []);
    assert.deepEqual(r.json.data.remove_models, ['claude-gone']);
    assert.equal((await channel(claude)).models, 'claude-old,claude-gone,claude-sonnet-4,claude-opus-4');
    assert.deepEqual(await abilityModels(claude, 'vip'), ['claude-gone', 'claude-old', 'claude-opus-4', 'claude-sonnet-4']);

    geminiModels = ['gemini-2.5-pro', 'gemini-2.5-flash'];
    const gemini = await create({ type: 24, key: GEMINI_KEY, name: 'gemini', base_url: up.url, models: 'gemini-2.5-pro' });
    const g = await admin.post(DETECT, { id: gemini });
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.json.data.add_models, ['gemini-2.5-flash'], 'a channel that did not opt in can still be checked on demand');
    await assertAbilitiesConsistent(s);
  });

  test('G37 applies the chosen staged changes: intersection, add beats remove, ignore and un-ignore', async () => {
    lists['/b'] = ['m1', 'm2', 'n1', 'n2', 'n3', 'n4'];
    const id = await create({ name: 'apply-b', base_url: up.url + '/b', group: 'default,vip', models: 'm1,m2,gone1,gone2', settings: OPT_IN });
    const d = await admin.post(DETECT, { id });
    assert.deepEqual(d.json.data.add_models, ['n1', 'n2', 'n3', 'n4']);
    assert.deepEqual(d.json.data.remove_models, ['gone1', 'gone2']);

    const r = await admin.post(APPLY, { id, add_models: ['n1', 'not-pending', 'n4'], remove_models: ['gone1', 'm1'], ignore_models: ['n2', 'n4', 'also-not-pending'] });
    assert.equal(r.status, 200, r.text);
    const a = r.json.data;
    assert.equal(a.id, id);
    assert.deepEqual(a.added_models, ['n1', 'n4']);
    assert.deepEqual(a.removed_models, ['gone1'], 'only staged removals are applied');
    assert.deepEqual(a.ignored_models, ['n2'], 'n4 is added, so not ignored');
    assert.deepEqual(a.remaining_models, ['n3']);
    assert.deepEqual(a.remaining_remove_models, ['gone2']);
    assert.equal(a.models, 'm1,m2,gone2,n1,n4');
    const settings = JSON.parse(a.settings);
    assert.deepEqual(settings.upstream_model_update_ignored_models, ['n2']);
    assert.deepEqual(settings.upstream_model_update_last_detected_models, ['n3']);
    assert.equal((await channel(id)).models, a.models);
    assert.deepEqual(await abilityModels(id, 'vip'), ['gone2', 'm1', 'm2', 'n1', 'n4']);

    // Ignored now: the next detection does not offer n2 again.
    const again = await admin.post(DETECT, { id });
    assert.deepEqual(again.json.data.add_models, ['n3']);

    // Stale lists written through G03: a model both staged to add and to remove is added; adding an ignored one un-ignores it.
    await writeSettings(id, { ...settings, upstream_model_update_last_detected_models: ['both', 'n2'], upstream_model_update_last_removed_models: ['both'], upstream_model_update_ignored_models: ['n2', 'regex:^zz'] });
    const stale = await admin.post(APPLY, { id, add_models: ['both', 'n2'], remove_models: ['both'] });
    assert.deepEqual(stale.json.data.added_models, ['both', 'n2']);
    assert.deepEqual(stale.json.data.removed_models, []);
    assert.deepEqual(JSON.parse(stale.json.data.settings).upstream_model_update_ignored_models, ['regex:^zz']);
    assert.ok(stale.json.data.models.split(',').includes('both'));

    // Nothing staged matches: nothing changes but the record.
    const none = await admin.post(APPLY, { id, add_models: ['zzz'] });
    assert.equal(none.status, 200, none.text);
    assert.equal(none.json.data.models, stale.json.data.models);
    const audit = await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', '=', 'G37').where('channel_id', '=', id).execute();
    assert.deepEqual(JSON.parse(audit[0]!.detail), { name: 'apply-b', added: 2, removed: 1, ignored: 1 });
    await assertAbilitiesConsistent(s);
  });

  test('G37 refusing a change leaves the channel as it was; bad input and unknown ids', async () => {
    const id = await create({ name: 'apply-bad', base_url: up.url + '/b', models: 'm1' });
    const long = 'y'.repeat(300);
    await writeSettings(id, { ...OPT_IN, upstream_model_update_last_detected_models: [long, 'fine'] });
    const before = await channel(id);
    const r = await admin.post(APPLY, { id, add_models: [long, 'fine'] });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'CHANNEL_INVALID');
    const after = await channel(id);
    assert.equal(after.models, before.models);
    assert.equal(after.settings, before.settings, 'a refused apply writes nothing');

    for (const body of [{}, { id: 'x' }, { id: 0 }, { id, add_models: 'm' }, { id, add_models: [1] }, { id, ignore_models: { a: 1 } }]) {
      const bad = await admin.post(APPLY, body);
      assert.equal(bad.status, 400, JSON.stringify(body) + bad.text);
      assert.equal(bad.json.code, 'INVALID_PARAMETERS', bad.text);
    }
    const malformed = await admin.request('POST', APPLY, '{"id": ', { 'content-type': 'application/json' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.code, 'INVALID_JSON');
    for (const path of [APPLY, DETECT]) {
      const unknown = await admin.post(path, { id: 99_999_999 });
      assert.equal(unknown.status, 404, unknown.text);
      assert.equal(unknown.json.code, 'CHANNEL_NOT_FOUND');
    }
    for (const body of [{}, { id: -1 }, { id: 1.5 }]) assert.equal((await admin.post(DETECT, body)).status, 400);
  });

  test('G39 upstream failures: an echoed key is scrubbed, a timeout is 504; the check time is still recorded', async () => {
    const bad = await create({ name: 'bad-key', key: BAD_KEY, base_url: up.url + '/c', models: 'm1', settings: OPT_IN });
    const r = await admin.post(DETECT, { id: bad });
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.code, 'UPSTREAM_BAD_STATUS');
    assert.equal(r.json.data.upstream_status, 401);
    assert.match(r.json.message, /\[redacted\]/);
    assert.ok((await channel(bad)).settingsJson.upstream_model_update_last_check_time > 0);
    const slow = await create({ name: 'slow', base_url: up.url + '/slow', models: 'm1', settings: OPT_IN });
    const t = await admin.post(DETECT, { id: slow });
    assert.equal(t.status, 504, t.text);
    assert.equal(t.json.code, 'UPSTREAM_TIMEOUT');
    const audit = await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', '=', 'G39').where('channel_id', '=', bad).execute();
    assert.equal(JSON.parse(audit[0]!.detail).failed, 'UPSTREAM_BAD_STATUS');
    // Keep these two out of the later runs' way: disabled channels are not part of G38/G40.
    const off = await root.post('/api/channel/status/batch', { ids: [bad, slow], status: 2 });
    assert.equal(off.json.data.count, 2, off.text);
  });

  test('a gateway without the allow-list refuses the loopback upstream', async () => {
    const c = await closed.staff('root2', 'root');
    const id = await create({ name: 'closed', base_url: up.url + '/d', models: 'm1', settings: OPT_IN }, c);
    const seen = up.seen.length;
    const r = await c.post(DETECT, { id });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.code, 'UPSTREAM_ADDRESS_REFUSED');
    assert.equal(up.seen.length, seen);
  });

  test('G38 applies every staged change of enabled opted-in channels; a failing channel is listed, the others go on', async () => {
    lists['/x'] = ['x1', 'x2'];
    lists['/y'] = ['y1'];
    const x = await create({ name: 'all-x', base_url: up.url + '/x', models: 'x1,x-old', settings: OPT_IN });
    const y = await create({ name: 'all-y', base_url: up.url + '/y', models: 'y0', settings: OPT_IN });
    const failing = await create({ name: 'all-failing', base_url: up.url + '/y', models: 'f1' });
    await writeSettings(failing, { ...OPT_IN, upstream_model_update_last_detected_models: ['z'.repeat(300)] });
    const optedOut = await create({ name: 'all-out', base_url: up.url + '/y', models: 'o1' });
    await writeSettings(optedOut, { upstream_model_update_last_detected_models: ['o2'] });
    const disabled = await create({ name: 'all-disabled', base_url: up.url + '/y', models: 'd1', status: 2 });
    await writeSettings(disabled, { ...OPT_IN, upstream_model_update_last_detected_models: ['d2'] });
    for (const id of [x, y]) assert.equal((await admin.post(DETECT, { id })).status, 200);

    const r = await admin.request('POST', APPLY_ALL); // no body at all
    assert.equal(r.status, 200, r.text);
    const d = r.json.data;
    const mine = (id: number) => d.results.find((e: { channel_id: number }) => e.channel_id === id);
    assert.deepEqual(mine(x), { channel_id: x, channel_name: 'all-x', added_models: ['x2'], removed_models: ['x-old'], remaining_models: [], remaining_remove_models: [] });
    assert.deepEqual(mine(y).added_models, ['y1']);
    assert.deepEqual(mine(y).removed_models, ['y0']);
    assert.ok(d.failed_channel_ids.includes(failing));
    assert.equal(d.failures.find((f: { channel_id: number }) => f.channel_id === failing).code, 'CHANNEL_INVALID');
    assert.ok(!mine(optedOut) && !mine(disabled) && !d.failed_channel_ids.includes(optedOut));
    assert.equal(d.count, d.results.length);
    assert.equal(d.processed_channels, d.results.length);
    assert.equal(d.added_models, d.results.reduce((n: number, e: { added_models: string[] }) => n + e.added_models.length, 0));
    assert.equal(d.more, false);
    assert.equal((await channel(x)).models, 'x1,x2');
    assert.equal((await channel(optedOut)).models, 'o1');
    assert.equal((await channel(disabled)).models, 'd1');
    // Applied lists are empty now: a second run changes nothing for them; after_id skips what came before.
    const second = await admin.post(APPLY_ALL, {});
    assert.ok(!second.json.data.results.some((e: { channel_id: number }) => e.channel_id === x));
    const later = await admin.post(APPLY_ALL, { after_id: failing });
    assert.ok(!later.json.data.failed_channel_ids.includes(failing));
    assert.equal((await admin.post(APPLY_ALL, { after_id: -1 })).status, 400);
    assert.ok((await s.ctx.db.selectFrom('gateway_audit').select('id').where('operation', '=', 'G38').execute()).length >= 3);
    await assertAbilitiesConsistent(s);
  });

  test('G40 runs as a job: 409 while it runs (also from another instance), progress and result in GS02, failures per channel', async () => {
    lists['/gate'] = ['g1', 'g2'];
    lists['/x'] = ['x1', 'x2', 'x3'];
    let release!: () => void;
    gate = new Promise<void>((r) => (release = r));
    releaseGate = release;
    const gated = await create({ name: 'job-gated', base_url: up.url + '/gate', models: 'g1', settings: OPT_IN });
    const bad = await create({ name: 'job-bad', key: BAD_KEY, base_url: up.url + '/c', models: 'm1', settings: OPT_IN });
    const slow = await create({ name: 'job-slow', base_url: up.url + '/slow', models: 'm1', settings: OPT_IN });
    const out = await create({ name: 'job-out', base_url: up.url + '/x', models: 'x1' });

    const started = await admin.post(DETECT_ALL, { force: true });
    assert.equal(started.status, 200, started.text);
    const { task_id, status, type } = started.json.data;
    assert.equal(status, 'running');
    assert.equal(type, 'model_update');
    await until(() => Promise.resolve(up.to('/gate/v1/models').length), (n) => n > 0);
    const busy = await admin.request('POST', DETECT_ALL);
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.json.code, 'JOB_RUNNING');
    assert.equal(busy.json.data.task_id, task_id);
    const otherAdmin = await b.staff('ops-b', 'admin');
    const elsewhere = await otherAdmin.post(DETECT_ALL, {});
    assert.equal(elsewhere.status, 409, elsewhere.text);
    assert.equal(elsewhere.json.data.task_id, task_id);

    releaseGate();
    const end = await until(() => otherAdmin.get(`/api/system_task/${task_id}`), (r) => r.json?.data?.status !== 'running');
    assert.equal(end.json.data.status, 'succeeded', end.text);
    const result = end.json.data.result;
    const entry = (id: number) => result.channel_detected_results.find((e: { channel_id: number }) => e.channel_id === id);
    assert.deepEqual(entry(gated).add_models, ['g2']);
    assert.deepEqual(result.failed_channel_ids.filter((id: number) => [bad, slow].includes(id)).sort(), [bad, slow].sort());
    const failure = (id: number) => result.failures.find((f: { channel_id: number }) => f.channel_id === id);
    assert.equal(failure(bad).code, 'UPSTREAM_BAD_STATUS');
    assert.match(failure(bad).message, /\[redacted\]/);
    assert.equal(failure(slow).code, 'UPSTREAM_TIMEOUT');
    assert.ok(!entry(out) && !failure(out), 'a channel that did not opt in is not checked');
    assert.equal(result.processed_channels, result.channel_detected_results.length);
    const progress = end.json.data.progress;
    assert.equal(progress.done, progress.total);
    assert.equal(progress.failed, result.failed_channel_ids.length);
    assert.equal((await channel(gated)).models, 'g1', 'staged only');
    const audit = await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', '=', 'G40').execute();
    assert.ok(audit.some((a) => JSON.parse(a.detail).task_id === task_id));

    // Without force, channels checked within GATEWAY_MODEL_UPDATE_MIN_INTERVAL_SECONDS are skipped.
    const seen = up.to('/gate/v1/models').length;
    const soft = await admin.post(DETECT_ALL, {});
    assert.equal(soft.status, 200, soft.text);
    const softEnd = await until(() => admin.get(`/api/system_task/${soft.json.data.task_id}`), (r) => r.json?.data?.status !== 'running');
    assert.equal(softEnd.json.data.status, 'succeeded');
    assert.equal(up.to('/gate/v1/models').length, seen, 'a channel checked just now was checked again');
    assert.ok(softEnd.json.data.result.skipped_channels >= 3);
    assert.equal(softEnd.json.data.result.processed_channels, 0);
    // bad input
    assert.equal((await admin.post(DETECT_ALL, { force: 'yes' })).status, 400);
  });

  test('the periodic run starts the job once per interval across instances and honours auto-sync', async () => {
    lists['/sched'] = ['s1', 's2'];
    const id = await create({ name: 'sched', base_url: up.url + '/sched', models: 's1', settings: { ...OPT_IN, upstream_model_update_auto_sync_enabled: true } });
    const env = { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES: '30' };
    const p = await startGateway(v, { env, shareWith: s });
    try {
      assert.equal(await p.services.updates.tick(), null, 'a job was started within the interval (the G40 runs above)');
      await s.ctx.db.updateTable('gateway_jobs').set({ created_at: 1 }).where('type', '=', 'model_update').execute();
      const job = await p.services.updates.tick();
      assert.ok(job, 'the due run did not start');
      assert.equal(await s.services.updates.tick(), null, 'disabled on this instance (interval 0)');
      const end = await until(() => admin.get(`/api/system_task/${job.task_id}`), (r) => r.json?.data?.status !== 'running');
      assert.equal(end.json.data.status, 'succeeded', end.text);
      assert.equal((await channel(id)).models, 's1,s2', 'auto-sync added the new model');
      const q = await p.services.updates.tick();
      assert.equal(q, null, 'started again within the interval');
    } finally {
      await p.close();
    }
    await assertAbilitiesConsistent(s);
  });
});
