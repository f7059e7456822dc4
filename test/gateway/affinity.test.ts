import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { gatewayCli } from '../helpers/gateway-cli.js';
import { keyFingerprint } from '../../src/gateway/affinity/service.js';
import { parseSettings, saveSettings } from '../../src/gateway/affinity/settings.js';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

const USER = 'user-affinity-SECRET-value-42';
const CACHE_KEY = 'prompt-cache-SECRET-key-7';

const SETTINGS = {
  enabled: true,
  max_entries: 3,
  rules: [
    { name: 'claude-cli', model_regex: ['^claude-'], key_sources: [{ type: 'gjson', path: 'metadata.user_id' }], ttl_seconds: 60 },
    { name: 'codex', model_regex: ['codex'], key_sources: [{ type: 'request_header', key: 'X-Prompt-Cache' }, { type: 'gjson', path: 'prompt_cache_key' }], ttl_seconds: 60 },
    { name: 'anon', key_sources: [{ type: 'context_string', key: 'token' }], include_rule_name: false, ttl_seconds: 1 },
  ],
};

function cli(s: GatewayServer, redisUrl: string | undefined, ...args: string[]) {
  return gatewayCli(s, redisUrl ? { REDIS_URL: redisUrl } : {}, ...args);
}

eachDatabase('gateway channel affinity (G60–G62)', (v) => {
  let s: GatewayServer;
  let other: GatewayServer;
  let root: StaffClient;
  let ops: StaffClient;
  const claude = (user: string) => ({ model: 'claude-sonnet-4', group: 'default', body: { metadata: { user_id: user } } });

  before(async () => {
    s = await startGateway(v);
    other = await startGateway(v, { shareWith: s });
    root = await s.staff('root', 'root');
    ops = await s.staff('ops', 'admin');
    await saveSettings(s.ctx, parseSettings(SETTINGS));
  });
  after(async () => {
    const all = s.everything() + other.everything();
    for (const secret of [USER, CACHE_KEY]) assert.ok(!all.includes(secret), 'a raw affinity value leaked');
    await other.close();
    await s.close();
  });

  test('the write path records and finds entries per rule; G62 counts them; G61 clears by rule and all', async () => {
    await s.services.affinity.cache.delete();
    const a = await s.services.affinity.record(claude(USER), 11);
    assert.deepEqual(a, { rule_name: 'claude-cli', key_fp: keyFingerprint(USER), key_hint: 'user...e-42' });
    assert.deepEqual(await s.services.affinity.lookup(claude(USER)), { channel_id: 11, rule_name: 'claude-cli', key_fp: keyFingerprint(USER), skip_retry_on_failure: false });
    assert.equal(await s.services.affinity.lookup({ ...claude(USER), group: 'vip' }), null, 'the group is part of the key');
    assert.equal(await s.services.affinity.record({ model: 'gpt-4o', group: 'default', body: {} }, 1), null, 'no rule matches');
    await s.services.affinity.record({ model: 'gpt-5-codex', group: 'default', headers: { 'x-prompt-cache': CACHE_KEY } }, 12);
    await s.services.affinity.record({ model: 'x', group: 'default', context: { token: 'tok-1' } }, 13);
    const stats = await root.get('/api/option/channel_affinity_cache');
    assert.equal(stats.status, 200, stats.text);
    assert.deepEqual(stats.json.data, { enabled: true, total: 3, unknown: 1, by_rule_name: { 'claude-cli': 1, codex: 1 }, cache_capacity: 3, cache_algo: v.redisUrl ? 'redis' : 'lru' });
    const byRule = await root.delete('/api/option/channel_affinity_cache?rule_name=codex');
    assert.deepEqual(byRule.json.data, { deleted: 1 });
    assert.equal((await root.delete('/api/option/channel_affinity_cache?rule_name=anon')).json.code, 'AFFINITY_RULE_INVALID', 'its keys do not carry its name');
    assert.equal((await root.delete('/api/option/channel_affinity_cache?rule_name=nope')).json.code, 'AFFINITY_RULE_INVALID');
    assert.equal((await root.delete('/api/option/channel_affinity_cache')).json.code, 'AFFINITY_CLEAR_TARGET_REQUIRED');
    assert.deepEqual((await root.delete('/api/option/channel_affinity_cache?all=true')).json.data, { deleted: 2 });
    assert.equal((await root.get('/api/option/channel_affinity_cache')).json.data.total, 0);
    const audit = await s.ctx.db.selectFrom('gateway_audit').select('detail').where('operation', '=', 'G61').execute();
    assert.equal(audit.length, 2);
  });

  test('entries expire after their rule TTL; G60 counts usage per rule, group and key fingerprint', async () => {
    await s.services.affinity.record({ model: 'x', group: 'default', context: { token: 'tok-2' } }, 21);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal(await s.services.affinity.lookup({ model: 'x', group: 'default', context: { token: 'tok-2' } }), null);
    await s.services.affinity.recordUsage(claude(USER), { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cached_tokens: 80 });
    await s.services.affinity.recordUsage(claude(USER), { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 });
    const fp = keyFingerprint(USER);
    const u = await ops.get(`/api/log/channel_affinity_usage_cache?rule_name=claude-cli&using_group=default&key_fp=${fp}`);
    assert.equal(u.status, 200, u.text);
    assert.equal(u.json.data.hit, 1);
    assert.equal(u.json.data.total, 2);
    assert.equal(u.json.data.prompt_tokens, 150);
    assert.equal(u.json.data.cached_tokens, 80);
    assert.equal(u.json.data.window_seconds, 60);
    assert.ok(u.json.data.last_seen_at > 0);
    const none = await ops.get('/api/log/channel_affinity_usage_cache?rule_name=claude-cli&key_fp=00000000');
    assert.equal(none.json.data.total, 0);
    for (const q of ['', '?rule_name=claude-cli', '?key_fp=abcdef12', '?rule_name=claude-cli&key_fp=XYZ', '?rule_name=bad%20name&key_fp=abcdef12']) {
      assert.equal((await ops.get(`/api/log/channel_affinity_usage_cache${q}`)).status, 400, q);
    }
  });

  test('permissions: G61 and G62 are root only, G60 staff', async () => {
    assert.equal((await ops.get('/api/option/channel_affinity_cache')).status, 403);
    assert.equal((await ops.delete('/api/option/channel_affinity_cache?all=true')).status, 403);
    const svc = await s.staff('svc', 'service', { grant: ['authz.ChannelRead'] });
    assert.equal((await svc.get(`/api/log/channel_affinity_usage_cache?rule_name=a&key_fp=abcdef12`)).json.code, 'GW_STAFF_REQUIRED');
  });

  test('settings are validated; the CLI stores them and (with Redis) records entries every instance sees', async () => {
    for (const bad of [{ rules: [{ name: 'x' }] }, { rules: [{ name: 'a b', key_sources: [{ type: 'gjson', path: 'a' }] }] }, { rules: [{ name: 'r', model_regex: ['('], key_sources: [{ type: 'gjson', path: 'a' }] }] }, { max_entries: 0 }, []]) {
      assert.throws(() => parseSettings(bad), (e: any) => e.code === 'AFFINITY_SETTINGS_INVALID', JSON.stringify(bad));
    }
    const file = path.join(s.dataDir, 'affinity.json');
    fs.writeFileSync(file, JSON.stringify({ ...SETTINGS, max_entries: 1000 }));
    const stored = await cli(s, v.redisUrl, 'affinity', 'settings', '--file', file);
    assert.equal(stored.error, null);
    assert.equal((await root.get('/api/option/channel_affinity_cache')).json.data.cache_capacity, 1000);
    fs.writeFileSync(file, '{"rules": 5}');
    assert.match((await cli(s, v.redisUrl, 'affinity', 'settings', '--file', file)).error ?? '', /rules must be a list/);
    const rec = await cli(s, v.redisUrl, 'affinity', 'record', '--model', 'claude-opus-4', '--group', 'default', '--body', JSON.stringify({ metadata: { user_id: USER } }), '--channel', '31');
    if (!v.redisUrl) {
      assert.match(rec.error ?? '', /REDIS_URL/, 'without Redis the CLI cannot reach the gateways\' cache');
      return;
    }
    assert.equal(rec.error, null);
    assert.equal(JSON.parse(rec.lines.at(-1)!).key_fp, keyFingerprint(USER));
    const oneOther = await other.staff('root2', 'root');
    assert.equal((await oneOther.get('/api/option/channel_affinity_cache')).json.data.by_rule_name['claude-cli'], 1, 'the second instance sees the entry');
    assert.equal((await other.services.affinity.lookup({ model: 'claude-opus-4', group: 'default', body: { metadata: { user_id: USER } } }))?.channel_id, 31);
    assert.deepEqual((await oneOther.delete('/api/option/channel_affinity_cache?all=true')).json.data, { deleted: 1 });
    assert.equal(await s.services.affinity.lookup({ model: 'claude-opus-4', group: 'default', body: { metadata: { user_id: USER } } }), null);
  });

  test('in process the cache keeps at most max_entries (least recently used goes first)', { skip: !!v.redisUrl && 'Redis bounds entries by their TTL' }, async () => {
    await saveSettings(s.ctx, parseSettings(SETTINGS));
    await s.services.affinity.cache.delete();
    for (let i = 0; i < 5; i++) await s.services.affinity.record(claude(`user-${i}-0123456789`), 100 + i);
    await s.services.affinity.lookup(claude('user-2-0123456789'));
    await s.services.affinity.record(claude('user-9-0123456789'), 109);
    assert.equal((await s.services.affinity.stats()).total, 3);
    assert.equal((await s.services.affinity.lookup(claude('user-2-0123456789')))?.channel_id, 102, 'recently used survives');
    assert.equal(await s.services.affinity.lookup(claude('user-3-0123456789')), null);
  });
});
