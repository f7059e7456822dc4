import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { buildGatewayApp } from '../../src/gateway/app.js';
import { createRuntime } from '../../src/runtime.js';
import { captureLog } from '../helpers/log-capture.js';
import { eachDatabase, tempDir } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

const KEYS = ['sk-seal-ONE-aaaaaaaaaaaa', 'sk-seal-TWO-bbbbbbbbbbbb'];

/** Builds a second gateway app on the server's database (another instance, or a restart). */
async function build(s: GatewayServer, env: Record<string, string> = {}) {
  const config = loadConfig({ DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, LOG_LEVEL: 'silent', ...env });
  const runtime = createRuntime(config, captureLog().stream);
  try {
    const built = await buildGatewayApp(config, runtime);
    return { ...built, close: async () => (await built.app.close(), await runtime.close()) };
  } catch (e) {
    await runtime.close();
    throw e;
  }
}

/** Runs the real CLI on the server's database; a failure returns its stderr instead of stdout. */
function cli(s: GatewayServer, args: string[], dataDir = s.dataDir): { ok: boolean; out: string } {
  try {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      env: { ...process.env, DATA_DIR: dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { ok: true, out };
  } catch (e) {
    return { ok: false, out: String((e as { stderr: string }).stderr) };
  }
}

eachDatabase('gateway sealing key: tied to the database, checked at start and on every sealing write', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  let channelId: number;
  let fileKey: string;
  before(async () => {
    s = await startGateway(v);
    root = await s.staff('boss', 'root');
    channelId = (await root.post('/api/channel/', { mode: 'multi_to_single', channel: { type: 1, name: 'mk', models: 'm', key: KEYS.join('\n') } })).json.data.ids[0];
    await s.services.staff.enrollTotp('boss');
    fileKey = fs.readFileSync(path.join(s.dataDir, 'gateway-secret.key'), 'utf8').trim();
  });
  after(async () => {
    for (const k of KEYS) assert.ok(!s.everything().includes(k), 'a key leaked');
    await s.close();
  });

  test('a start with another key than the database was sealed with is refused, naming the source only', async () => {
    const other = crypto.randomBytes(32).toString('hex');
    const noKey = (e: Error) => !e.message.includes(other) && !e.message.includes(fileKey);
    await assert.rejects(build(s, { GATEWAY_SECRET_KEY: other }), (e: Error) => /from GATEWAY_SECRET_KEY does not match/.test(e.message) && noKey(e));
    const dir = tempDir('gw-other-');
    fs.writeFileSync(path.join(dir, 'gateway-secret.key'), other + '\n');
    const file = path.join(dir, 'gateway-secret.key');
    await assert.rejects(build(s, { DATA_DIR: dir }), (e: Error) => e.message.includes(`from the key file ${file} does not match`) && noKey(e));
    // A database from before the fingerprint: a sealed value must open with the key, then it is recorded.
    await s.ctx.db.deleteFrom('gateway_meta').where('key', '=', 'sealing_key_fingerprint').execute();
    await assert.rejects(build(s, { GATEWAY_SECRET_KEY: other }), /does not match/);
    const ok = await build(s, { GATEWAY_SECRET_KEY: fileKey });
    await ok.close();
    assert.ok(await s.ctx.db.selectFrom('gateway_meta').select('value').where('key', '=', 'sealing_key_fingerprint').executeTakeFirst());
    await assert.rejects(build(s, { DATA_DIR: dir }), /does not match/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a corrupt key file fails start-up without showing its content', async () => {
    const dir = tempDir('gw-corrupt-');
    const file = path.join(dir, 'gateway-secret.key');
    for (const content of ['not-a-hex-key-CONTENT\n', '', fileKey.slice(0, 40)]) {
      fs.writeFileSync(file, content);
      await assert.rejects(build(s, { DATA_DIR: dir }), (e: Error) => e.message.includes(`${file} is corrupt`) && (content === '' || !e.message.includes(content.trim())));
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the CLI with another DATA_DIR refuses instead of generating a key, and writes nothing', async () => {
    const dir = tempDir('gw-cli-');
    const before = await s.ctx.db.selectFrom('staff').select('totp_secret').where('name', '=', 'boss').executeTakeFirstOrThrow();
    const r = cli(s, ['staff', 'totp', '--name', 'boss'], dir);
    assert.equal(r.ok, false, r.out);
    assert.match(r.out, /no new key was generated/);
    assert.ok(!fs.existsSync(path.join(dir, 'gateway-secret.key')));
    const after = await s.ctx.db.selectFrom('staff').select('totp_secret').where('name', '=', 'boss').executeTakeFirstOrThrow();
    assert.equal(after.totp_secret, before.totp_secret);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('after gateway-rekey by the CLI, the running gateway answers GATEWAY_SEALING_KEY_CHANGED and writes nothing', async () => {
    const r = cli(s, ['gateway-rekey']);
    assert.ok(r.ok, r.out);
    const newKey = r.out.trim().split('\n').at(-1)!;
    const counts = async () => {
      const n = async (t: 'channels' | 'abilities' | 'gateway_audit' | 'idempotency_keys') =>
        Number((await s.ctx.db.selectFrom(t).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const keys = await s.ctx.db.selectFrom('channels').select('key').orderBy('id').execute();
      const totp = await s.ctx.db.selectFrom('staff').select('totp_secret').orderBy('id').execute();
      return JSON.stringify([await n('channels'), await n('abilities'), await n('gateway_audit'), await n('idempotency_keys'), keys, totp]);
    };
    const before = await counts();
    const refused = (reply: { status: number; json: any; text: string }) => {
      assert.equal(reply.status, 503, reply.text);
      assert.equal(reply.json.code, 'GATEWAY_SEALING_KEY_CHANGED');
    };
    refused(await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'new', models: 'm', key: 'sk-new' } }, { 'idempotency-key': 'k1' }));
    const zh = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'new', models: 'm', key: 'sk-new' } }, { 'accept-language': 'zh-CN' });
    refused(zh);
    assert.match(zh.json.message, /gateway-rekey/);
    refused(await root.put('/api/channel/', { id: channelId, key: 'sk-replaced', key_mode: 'append' }));
    refused(await root.post(`/api/channel/copy/${channelId}`));
    refused(await root.post('/api/channel/multi_key/manage', { channel_id: channelId, action: 'delete_key', key_index: 0 }));
    refused(await root.post('/api/channel/multi_key/manage', { channel_id: channelId, action: 'get_key_status' }));
    refused(await root.post('/api/staff/verify', { code: '123456', scope: 'channel.key.read', context: { channel_id: channelId } }));
    await assert.rejects(s.services.staff.enrollTotp('boss'), { code: 'GATEWAY_SEALING_KEY_CHANGED' });
    assert.equal(await counts(), before);
    // A restart picks up the new key file and reads every key.
    const restarted = await build(s);
    try {
      assert.equal(restarted.ctx.secretKey.toString('hex'), newKey);
      const row = await restarted.ctx.db.selectFrom('channels').select('key').where('id', '=', channelId).executeTakeFirstOrThrow();
      assert.equal(restarted.services.channels.openKey(row.key), KEYS.join('\n'));
    } finally {
      await restarted.close();
    }
  });
});
