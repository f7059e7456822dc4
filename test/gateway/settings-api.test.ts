import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';
import { gatewayCli } from '../helpers/gateway-cli.js';

// The settings that were CLI-only, through the API (GS16–GS20): round trips, the named validation codes,
// root only, audited with the staff member, the io.net key never answered nor audited, and the relay
// pricing and routing with a new setting at once (the prices cache is long here: 60 s).
const IONET_KEY = 'ionet-settings-KEY-0123456789abcdef';
const CHANNEL_KEY = 'sk-settings-channel-0123456789';
const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };

eachDatabase('gateway settings API (GS16–GS20)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  let admin: StaffClient;

  before(async () => {
    up = await startFakeUpstream({
      'POST /ok/v1/chat/completions': (r: Seen, res: http.ServerResponse) =>
        sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: r.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: USAGE }),
      'GET /caas/hardware/max-gpus-per-container': (r, res) =>
        r.headers['x-api-key'] === IONET_KEY ? sendJson(res, 200, { data: { hardware: [{ hardware_id: 7, hardware_name: 'H100', brand_name: 'NVIDIA', max_gpus_per_container: 8, available: 5 }], total: 5 } }) : sendJson(res, 401, { detail: 'bad key' }),
    });
    s = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '60000', GATEWAY_IONET_BASE_URL: up.url + '/caas' } });
    root = await s.staff('chief', 'root');
    admin = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = s.everything();
    assert.ok(!all.includes(IONET_KEY), 'the io.net key leaked into an answer or a log line');
    assert.ok(!all.includes(CHANNEL_KEY), 'the channel key leaked');
    await s.close();
    await up.close();
  });

  const audits = async (operation: string) =>
    (await s.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', '=', operation).orderBy('id').execute()).map((r) => ({ actor: r.actor_name, detail: JSON.parse(r.detail) }));

  test('GS16 / GS17: every map comes back, a map left out is emptied, group_ratio left out stays', async () => {
    const empty = await root.get('/api/ratio_config');
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.json.data.model_ratio, {});
    assert.deepEqual(Object.keys(empty.json.data).sort(), ['audio_completion_ratio', 'audio_ratio', 'billing_expr', 'billing_mode', 'cache_ratio', 'completion_ratio', 'create_cache_ratio', 'group_ratio', 'image_ratio', 'model_price', 'model_ratio']);

    const config = { model_ratio: { 'gpt-x': 1.5, 'gpt-y': 0 }, completion_ratio: { 'gpt-x': 4 }, cache_ratio: { 'gpt-x': 0.25 }, model_price: { 'img-1': 0.04 }, billing_mode: { 'gpt-x': 'tiered' }, group_ratio: { vip: 0.5 } };
    const put = await root.put('/api/ratio_config', config);
    assert.equal(put.status, 200, put.text);
    const read = (await root.get('/api/ratio_config')).json.data;
    for (const [field, map] of Object.entries(config)) assert.deepEqual(read[field], map, field);
    assert.deepEqual(put.json.data, read);

    assert.equal((await root.put('/api/ratio_config', { model_ratio: { 'gpt-x': 2 } })).status, 200);
    const after = (await root.get('/api/ratio_config')).json.data;
    assert.deepEqual([after.model_ratio, after.completion_ratio, after.model_price, after.group_ratio], [{ 'gpt-x': 2 }, {}, {}, { vip: 0.5 }]);
    assert.equal((await root.put('/api/ratio_config', { model_ratio: { 'gpt-x': 2 }, group_ratio: {} })).status, 200);
    assert.deepEqual((await root.get('/api/ratio_config')).json.data.group_ratio, {});

    const log = await audits('GS17');
    assert.equal(log.at(-1)!.actor, 'chief');
    assert.deepEqual(log.at(-1)!.detail, { mode: 'replace', fields: { model_ratio: 1, group_ratio: 0 }, ok: true, removed: 1 });
  });

  test('GS17 refuses with a code naming the field; nothing is stored', async () => {
    await root.put('/api/ratio_config', { model_ratio: { keep: 1 } });
    const cases: [unknown, string, Record<string, string>][] = [
      [{ model_ratio: { a: 1 }, model_ratoi: { a: 1 } }, 'RATIO_CONFIG_FIELD_UNKNOWN', { field: 'model_ratoi' }],
      [{ completion_ratio: [1, 2] }, 'RATIO_CONFIG_FIELD_INVALID', { field: 'completion_ratio' }],
      [{ model_ratio: { 'gpt-x': -1 } }, 'RATIO_CONFIG_VALUE_INVALID', { field: 'model_ratio', model: 'gpt-x' }],
      [{ cache_ratio: { 'gpt-x': '0.5' } }, 'RATIO_CONFIG_VALUE_INVALID', { field: 'cache_ratio', model: 'gpt-x' }],
      [{ model_price: { '': 1 } }, 'RATIO_CONFIG_MODEL_INVALID', { field: 'model_price' }],
      [{ group_ratio: { vip: null } }, 'RATIO_CONFIG_VALUE_INVALID', { field: 'group_ratio', model: 'vip' }],
    ];
    for (const [body, code, data] of cases) {
      const r = await root.put('/api/ratio_config', body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.code, code, JSON.stringify(body));
      assert.deepEqual(r.json.data, data);
      assert.ok(r.json.message.includes(data.field!), r.json.message);
    }
    const zh = await root.put('/api/ratio_config', { model_ratio: { 'gpt-x': -1 } }, { 'accept-language': 'zh-CN' });
    assert.match(zh.json.message, /model_ratio 中 gpt-x 的取值必须是不小于 0 的数字/);
    assert.equal((await root.put('/api/ratio_config', [1])).status, 400);
    assert.deepEqual((await root.get('/api/ratio_config')).json.data.model_ratio, { keep: 1 });
    assert.equal((await audits('GS17')).at(-1)!.detail.failed, 'RATIO_CONFIG_VALUE_INVALID');

    // The CLI checks the same way and names the field; what it stores GS16 reads.
    const file = path.join(s.dataDir, 'ratios.json');
    fs.writeFileSync(file, JSON.stringify({ model_ratio: { cli: -3 } }));
    assert.equal((await gatewayCli(s, {}, 'ratio-config', '--file', file)).error, 'The value of cli in model_ratio must be a number of 0 or more (billing_mode and billing_expr: text of at most 2000 characters)');
    fs.writeFileSync(file, JSON.stringify({ model_ratio: { cli: 3 } }));
    assert.equal((await gatewayCli(s, {}, 'ratio-config', '--file', file)).error, null);
    assert.deepEqual((await root.get('/api/ratio_config')).json.data.model_ratio, { keep: 1, cli: 3 }, 'the CLI merges: pricing one model leaves the others priced');
  });

  test('ratio-config merges by default; --replace replaces and prints what it removed; both audited', async () => {
    assert.equal((await root.put('/api/ratio_config', { model_ratio: { a: 1, b: 2 }, completion_ratio: { a: 2 }, model_price: { img: 0.04 } })).status, 200);
    const file = path.join(s.dataDir, 'ratios-merge.json');
    fs.writeFileSync(file, JSON.stringify({ model_ratio: { b: 5, c: 3 }, group_ratio: { vip: 2 } }));
    const merged = await gatewayCli(s, {}, 'ratio-config', '--file', file);
    assert.equal(merged.error, null);
    assert.ok(!merged.lines.some((l) => /removed/.test(l)), merged.lines.join('\n'));
    const after = (await root.get('/api/ratio_config')).json.data;
    assert.deepEqual(after.model_ratio, { a: 1, b: 5, c: 3 });
    assert.deepEqual(after.completion_ratio, { a: 2 }, 'a map left out of a merge stays');
    assert.deepEqual(after.model_price, { img: 0.04 });
    assert.equal(after.group_ratio.vip, 2);

    fs.writeFileSync(file, JSON.stringify({ model_ratio: { c: 4 } }));
    const replaced = await gatewayCli(s, {}, 'ratio-config', '--file', file, '--replace');
    assert.equal(replaced.error, null);
    const removed = replaced.lines.filter((l) => l.startsWith('removed'));
    assert.deepEqual(removed.sort(), ['removed: completion_ratio a', 'removed: model_price img', 'removed: model_ratio a', 'removed: model_ratio b']);
    const now = (await root.get('/api/ratio_config')).json.data;
    assert.deepEqual(now.model_ratio, { c: 4 });
    assert.deepEqual(now.model_price, {});
    assert.equal(now.group_ratio.vip, 2, 'group_ratio left out stays, as with GS17');

    const cli = await audits('cli:ratio-config');
    assert.equal(cli.length >= 3, true, JSON.stringify(cli));
    assert.match(cli.at(-1)!.actor, /^cli:/);
    assert.deepEqual(cli.at(-1)!.detail, { mode: 'replace', fields: { model_ratio: 1 }, ok: true, removed: 4 });
    assert.deepEqual(cli.at(-2)!.detail, { mode: 'merge', fields: { model_ratio: 2, group_ratio: 1 }, ok: true, removed: 0 });
    assert.equal(cli.find((r) => r.detail.failed)?.detail.failed, 'RATIO_CONFIG_VALUE_INVALID', 'a refused change is audited too');
  });

  test('a non-root staff member gets 403 on every settings operation', async () => {
    const calls: [string, string, unknown?][] = [
      ['GET', '/api/ratio_config'],
      ['PUT', '/api/ratio_config', { model_ratio: {} }],
      ['PUT', '/api/deployments/settings', { enabled: true }],
      ['GET', '/api/option/channel_affinity_setting'],
      ['PUT', '/api/option/channel_affinity_setting', { enabled: true }],
    ];
    for (const [method, path, body] of calls) {
      const r = await admin.request(method, path, body);
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.equal(r.json.code, 'GW_ROOT_REQUIRED');
    }
    assert.equal((await s.anonymous().get('/api/ratio_config')).status, 401);
  });

  test('the relay prices the next call with a new ratio configuration at once', async () => {
    const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'priced', base_url: `${up.url}/ok`, models: 'priced-model', key: CHANNEL_KEY, group: 'default' } });
    assert.equal(created.status, 200, created.text);
    assert.equal((await root.put('/api/ratio_config', { model_ratio: { 'priced-model': 1 } })).status, 200);
    const first = await relay(s.url, '/chat/completions', { model: 'priced-model', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.summary.quota, 120, '(100 + 20) × 1');
    assert.equal((await root.put('/api/ratio_config', { model_ratio: { 'priced-model': 2 }, completion_ratio: { 'priced-model': 3 } })).status, 200);
    const second = await relay(s.url, '/chat/completions', { model: 'priced-model', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(second.summary.quota, 320, '(100 + 20 × 3) × 2, not the cached price');
    assert.equal((await root.put('/api/ratio_config', { model_ratio: {}, model_price: { 'priced-model': 0.01 } })).status, 200);
    assert.equal((await relay(s.url, '/chat/completions', { model: 'priced-model', messages: [{ role: 'user', content: 'hi' }] })).summary.quota, 5000);
  });

  test('GS18 stores the io.net switch and key; the key is never answered nor audited; G57 and G58 use it', async () => {
    const none = await root.put('/api/deployments/settings', {});
    assert.equal(none.status, 400);
    assert.equal(none.json.code, 'DEPLOYMENT_SETTINGS_EMPTY');
    assert.equal((await root.put('/api/deployments/settings', { enabled: 'yes' })).json.code, 'INVALID_PARAMETERS');
    assert.equal((await root.put('/api/deployments/settings', { apikey: 'x' })).json.code, 'INVALID_PARAMETERS');

    const on = await root.put('/api/deployments/settings', { enabled: true, api_key: ` ${IONET_KEY} ` });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.json.data, { enabled: true, configured: true });
    assert.equal(on.headers.get('cache-control'), 'no-store');
    const g57 = await root.get('/api/deployments/settings');
    assert.deepEqual([g57.json.data.enabled, g57.json.data.configured, g57.json.data.can_connect, g57.json.data.hardware_count], [true, true, true, 1]);
    const g58 = await root.post('/api/deployments/settings/test-connection', {});
    assert.equal(g58.status, 200, g58.text);
    assert.equal(g58.json.data.total_available, 5);
    assert.equal(up.seen.filter((x) => x.path.startsWith('/caas/')).at(-1)!.headers['x-api-key'], IONET_KEY, 'the key stored trimmed');

    assert.deepEqual((await root.put('/api/deployments/settings', { enabled: false })).json.data, { enabled: false, configured: true });
    assert.deepEqual((await root.put('/api/deployments/settings', { api_key: '' })).json.data, { enabled: false, configured: false });
    assert.equal((await root.get('/api/deployments/settings')).json.data.configured, false);

    const log = await audits('GS18');
    assert.deepEqual(log.map((l) => [l.actor, l.detail]), [
      ['chief', { failed: 'DEPLOYMENT_SETTINGS_EMPTY' }],
      ['chief', { enabled: true, api_key: 'set', ok: true }],
      ['chief', { enabled: false, ok: true }],
      ['chief', { api_key: 'removed', ok: true }],
    ]);
    const rows = await s.ctx.db.selectFrom('gateway_audit').select('detail').execute();
    assert.ok(!rows.some((r) => r.detail.includes(IONET_KEY)), 'the key is in the audit log');
  });

  test('GS19 / GS20: channel-affinity settings round trip, named failures, used by the relay at once', async () => {
    const defaults = await root.get('/api/option/channel_affinity_setting');
    assert.equal(defaults.status, 200, defaults.text);
    assert.deepEqual(defaults.json.data, { enabled: false, switch_on_success: true, keep_on_channel_disabled: false, max_entries: 100000, default_ttl_seconds: 3600, rules: [] });

    const request = { model: 'gpt-x', group: 'default', body: { prompt_cache_key: 'session-1' } };
    assert.equal(await s.services.affinity.record(request, 1), null, 'off: nothing recorded (and the relay has read the settings)');

    const settings = {
      enabled: true,
      switch_on_success: false,
      keep_on_channel_disabled: true,
      max_entries: 500,
      default_ttl_seconds: 600,
      rules: [{ name: 'codex', model_regex: ['^gpt-'], path_regex: [], user_agent_include: ['codex'], key_sources: [{ type: 'gjson', path: 'prompt_cache_key' }], value_regex: '', ttl_seconds: 120, skip_retry_on_failure: true, include_using_group: true, include_model_name: false, include_rule_name: true }],
    };
    const put = await root.put('/api/option/channel_affinity_setting', settings);
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.data, settings);
    assert.deepEqual((await root.get('/api/option/channel_affinity_setting')).json.data, settings);

    // The rule needs the user agent: no match without it, a match with it, at once (not after the relay's reread).
    assert.equal(await s.services.affinity.record(request, 1), null);
    assert.equal((await s.services.affinity.record({ ...request, userAgent: 'codex-cli/1.0' }, 1))?.rule_name, 'codex');
    const stats = (await root.get('/api/option/channel_affinity_cache')).json.data;
    assert.deepEqual([stats.enabled, stats.total, stats.by_rule_name, stats.cache_capacity], [true, 1, { codex: 1 }, 500]);
    assert.equal((await root.delete('/api/option/channel_affinity_cache?rule_name=codex')).json.data.deleted, 1);

    const bad: [unknown, RegExp][] = [
      [{ ...settings, rules: [{ ...settings.rules[0], model_regex: ['(unclosed'] }] }, /rules\[0\]\.model_regex/],
      [{ ...settings, max_entries: 0 }, /max_entries must be an integer/],
      [{ ...settings, enabled: 'yes' }, /enabled must be true or false/],
      [{ ...settings, rules: [{ ...settings.rules[0], key_sources: [{ type: 'cookie', key: 'x' }] }] }, /rules\[0\]\.key_sources\[0\]\.type/],
    ];
    for (const [body, field] of bad) {
      const r = await root.put('/api/option/channel_affinity_setting', body);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.json.code, 'AFFINITY_SETTINGS_INVALID');
      assert.match(r.json.message, field);
    }
    assert.deepEqual((await root.get('/api/option/channel_affinity_setting')).json.data, settings, 'a refused write keeps the settings');
    const log = await audits('GS20');
    assert.deepEqual(log[0], { actor: 'chief', detail: { rules: 1, ok: true, enabled: true, rule_names: ['codex'] } });
    assert.equal(log.at(-1)!.detail.failed, 'AFFINITY_SETTINGS_INVALID');
  });
});
