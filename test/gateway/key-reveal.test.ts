import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';

const KEY = 'sk-secret-REVEAL-9f8e7d6c5b4a3210';

/** Runs the real CLI against the server's database; returns stdout lines. */
function cli(s: GatewayServer, args: string[]): string[] {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { ...process.env, DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, LOG_LEVEL: 'info' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return out.trim().split('\n');
}

function codeFor(secret: string, offsetSteps = 0) {
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
  return totp.generate({ timestamp: Date.now() + offsetSteps * 30_000 });
}

eachDatabase('gateway key reveal (G10) with staff verification and the CLI', (v) => {
  let s: GatewayServer;
  let root: StaffClient;
  let secret: string;
  let channelId: number;
  before(async () => {
    s = await startGateway(v);
  });
  after(async () => {
    const transcript = s.transcript.filter((t) => !t.includes('"key":"sk-secret'));
    assert.ok(!transcript.join('\n').includes(KEY), 'key leaked in a response other than G10');
    assert.ok(!s.log.text().includes(KEY), 'key leaked in the log');
    await s.close();
  });

  test('CLI: staff create, token create (last stdout line), totp enrollment, service create, grant/deny', async () => {
    cli(s, ['staff', 'create', '--name', 'boss', '--role', 'root']);
    const token = cli(s, ['token', 'create', '--staff', 'boss']).at(-1)!;
    assert.match(token, /^gwst_[A-Za-z0-9_-]{43}$/);
    root = s.client(token);
    secret = cli(s, ['staff', 'totp', '--name', 'boss']).at(-1)!;
    assert.match(secret, /^[A-Z2-7]{32}$/);
    const svc = s.client(cli(s, ['service', 'create', '--name', 'ops-adapter', '--permission', 'authz.ChannelRead,authz.ChannelOperate']).at(-1)!);
    assert.equal((await svc.get('/api/channel/')).status, 200);
    assert.equal((await svc.post('/api/channel/', { mode: 'single', channel: { key: 'x' } })).status, 403);
    cli(s, ['staff', 'deny', '--name', 'ops-adapter', '--permission', 'authz.ChannelRead']);
    assert.equal((await svc.get('/api/channel/')).status, 403);
    const created = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'secret-one', key: KEY, models: 'm' } });
    channelId = created.json.data.ids[0];
    await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'other', key: 'sk-other', models: 'm' } });
  });

  test('G10 without a proof, with a wrong code, with a proof for another channel: refused', async () => {
    const none = await root.post(`/api/channel/${channelId}/key`);
    assert.equal(none.status, 403);
    assert.equal(none.json.code, 'GW_PROOF_REQUIRED');
    const wrong = await root.post('/api/staff/verify', { code: '000000', scope: 'channel.key.read', context: { channel_id: channelId } });
    assert.equal(wrong.json.code, 'GW_VERIFY_CODE_INVALID');
    const scope = await root.post('/api/staff/verify', { code: codeFor(secret, -1), scope: 'user.delete', context: { channel_id: channelId } });
    assert.equal(scope.json.code, 'GW_VERIFY_SCOPE_INVALID');
    // One code, computed once: recomputing it later could cross a 30 s step boundary and yield a new code.
    const code = codeFor(secret, -1);
    const other = await root.post('/api/staff/verify', { code, scope: 'channel.key.read', context: { channel_id: channelId + 1 } });
    assert.equal(other.status, 200, other.text);
    const r = await root.post(`/api/channel/${channelId}/key`, undefined, { 'x-security-proof': other.json.data.proof_token });
    assert.equal(r.json.code, 'GW_PROOF_INVALID');
    // The same TOTP code cannot be used a second time.
    const replay = await root.post('/api/staff/verify', { code, scope: 'channel.key.read', context: { channel_id: channelId } });
    assert.equal(replay.json.code, 'GW_VERIFY_CODE_INVALID');
  });

  test('G10 with a fresh proof reveals the key once, and the reveal is audited', async () => {
    const v1 = await root.post('/api/staff/verify', { code: codeFor(secret, 0), scope: 'channel.key.read', context: { channel_id: channelId } });
    assert.equal(v1.status, 200, v1.text);
    assert.ok(v1.json.data.expires_at > Date.now() / 1000);
    const h = { 'x-security-proof': v1.json.data.proof_token };
    const r = await root.post(`/api/channel/${channelId}/key`, undefined, h);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data, { id: channelId, name: 'secret-one', key: KEY });
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const again = await root.post(`/api/channel/${channelId}/key`, undefined, h);
    assert.equal(again.json.code, 'GW_PROOF_INVALID');
    const audit = cli(s, ['audit', '--channel', String(channelId)]).map((l) => JSON.parse(l));
    assert.ok(audit.some((a) => a.operation === 'G10' && a.actor_name === 'boss'));
    assert.ok(!JSON.stringify(audit).includes(KEY));
  });

  test('an expired proof is refused; admins and services cannot reveal', async () => {
    await s.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).execute();
    const p = await root.post('/api/staff/verify', { code: codeFor(secret, 1), scope: 'channel.key.read', context: { channel_id: channelId } });
    assert.equal(p.status, 200, p.text);
    await s.ctx.db.updateTable('security_proofs').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).where('used_at', 'is', null).execute();
    assert.equal((await root.post(`/api/channel/${channelId}/key`, undefined, { 'x-security-proof': p.json.data.proof_token })).json.code, 'GW_PROOF_INVALID');
    const admin = await s.staff('adm', 'admin', { grant: ['authz.ChannelSensitiveWrite'] });
    assert.equal((await admin.post(`/api/channel/${channelId}/key`)).json.code, 'GW_ROOT_REQUIRED');
  });

  test('CLI: token revoke, and re-encryption under a new key keeps keys readable', async () => {
    const t = cli(s, ['token', 'create', '--staff', 'boss', '--ttl', '600']).at(-1)!;
    assert.equal((await s.client(t).get('/api/channel/')).status, 200);
    cli(s, ['token', 'revoke', '--token', t]);
    assert.equal((await s.client(t).get('/api/channel/')).status, 401);
    const before = await s.ctx.db.selectFrom('channels').select('key').where('id', '=', channelId).executeTakeFirstOrThrow();
    const newKey = cli(s, ['gateway-rekey']).at(-1)!;
    assert.match(newKey, /^[0-9a-f]{64}$/);
    const after = await s.ctx.db.selectFrom('channels').select('key').where('id', '=', channelId).executeTakeFirstOrThrow();
    assert.notEqual(after.key, before.key);
    const { open } = await import('../../src/kit/crypto/aead.js');
    assert.equal(open(Buffer.from(newKey, 'hex'), after.key, 'channel.key'), KEY);
    const fs = await import('node:fs');
    const file = `${s.dataDir}/gateway-secret.key`;
    assert.equal(fs.readFileSync(file, 'utf8').trim(), newKey);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  test('rate limit on verification attempts', async () => {
    const codes = [];
    for (let i = 0; i < 7; i++) codes.push((await root.post('/api/staff/verify', { code: '123456', scope: 'channel.key.read', context: { channel_id: channelId } })).status);
    assert.ok(codes.includes(429), codes.join(','));
  });
});
