import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { sql } from 'kysely';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';

function codeFor(secret: string) {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate();
}

eachDatabase('edge administration from the gateway (GS22–GS34, edge co-hosted)', (v) => {
  let s: Stack;
  let root: StaffClient;
  let admin: StaffClient;
  let totp: string;
  const secrets: string[] = [];

  async function proof() {
    // A code is accepted once per 30-second step: forget the last step used so the test need not wait for the next one.
    await s.gateway.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).where('name', '=', 'edge-root').execute();
    const r = await root.post('/api/staff/verify', { code: codeFor(totp), scope: 'StaffSecret' });
    assert.equal(r.status, 200, r.text);
    return r.json.data.proof_token as string;
  }

  before(async () => {
    s = await startStack(v);
    root = await s.gateway.staff('edge-root', 'root');
    admin = await s.gateway.staff('edge-admin', 'admin', { grant: ['authz.ChannelRead', 'authz.ChannelWrite'] });
    totp = (await s.gateway.services.staff.enrollTotp('edge-root')).secret;
  });
  after(async () => {
    // Keys and signing secrets appear only in the one answer that issued them, never in the log or the audit.
    const audit = JSON.stringify(await s.gateway.ctx.db.selectFrom('gateway_audit').selectAll().execute());
    const log = s.gateway.log.text() + s.edge.log.text();
    const others = s.gateway.transcript.filter((t) => !secrets.some((x) => t.includes(`"key":"${x}"`) || t.includes(`"secret":"${x}"`)));
    for (const x of secrets) {
      assert.ok(!audit.includes(x), 'a secret in the audit log');
      assert.ok(!log.includes(x), 'a secret in the log');
      assert.ok(!others.join('\n').includes(x), 'a secret in another answer');
    }
    await s.close();
  });

  test('GS22: served, with the admission mode; root only', async () => {
    const r = await root.get('/api/edge/status');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.data, { served: true, admission_mode: 'controlled', relay_configured: true });
    for (const [m, p] of [
      ['GET', '/api/edge/status'],
      ['GET', '/api/edge/models'],
      ['PUT', '/api/edge/models'],
      ['GET', '/api/edge/keys'],
      ['POST', '/api/edge/keys'],
      ['DELETE', '/api/edge/keys/abc'],
      ['GET', '/api/edge/wallets'],
      ['POST', '/api/edge/wallets/acme/credit'],
      ['GET', '/api/edge/usage?owner=acme'],
      ['GET', '/api/edge/webhooks'],
      ['POST', '/api/edge/webhooks'],
      ['DELETE', '/api/edge/webhooks/abc'],
      ['POST', '/api/edge/webhooks/replay'],
    ] as const) {
      const denied = await admin.request(m, p, m === 'GET' || m === 'DELETE' ? undefined : {});
      assert.equal(denied.status, 403, `${m} ${p}`);
      assert.equal(denied.json.code, 'GW_ROOT_REQUIRED');
      assert.equal((await s.gateway.anonymous().request(m, p, m === 'GET' || m === 'DELETE' ? undefined : {})).status, 401);
    }
  });

  test('GS23/GS24: public models set and listed, as the edge serves them', async () => {
    const put = await root.put('/api/edge/models', { public_model_id: 'chat-pro', reserve_amount: 2000, gateway_model: 'gpt-4o', group: 'default', overdraft: 500, enabled: true });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.data.reserve_amount, 2000);
    assert.equal(put.json.data.gateway_model, 'gpt-4o');
    const off = await root.put('/api/edge/models', { public_model_id: 'vendor/off', reserve_amount: 1 , enabled: false });
    assert.equal(off.json.data.group, 'default');
    assert.equal(off.json.data.enabled, false);
    const list = await root.get('/api/edge/models');
    assert.deepEqual(
      list.json.data.map((m: any) => [m.public_model_id, m.reserve_amount, m.gateway_model, m.overdraft, m.enabled]),
      [['chat-pro', 2000, 'gpt-4o', 500, true], ['vendor/off', 1, null, 0, false]],
    );
    const bad = await root.put('/api/edge/models', { public_model_id: 'has space', reserve_amount: 1 });
    assert.equal(bad.status, 400);
    assert.equal((await root.put('/api/edge/models', { public_model_id: 'x', reserve_amount: -1 })).status, 400);
    // The CLI sees the same models (one service behind both).
    const cli = await s.edge.cli('edge', 'model', 'list');
    assert.deepEqual(cli.lines, ['chat-pro\t2000\tgpt-4o\tdefault\t500\tenabled', 'vendor/off\t1\tvendor/off\tdefault\t0\tdisabled']);
  });

  let keyId: string;
  let key: string;
  test('GS26: a key is issued only with a fresh StaffSecret proof, shown once; GS25 lists it without the secret', async () => {
    const none = await root.post('/api/edge/keys', { owner: 'acme' });
    assert.equal(none.status, 403);
    assert.equal(none.json.code, 'GW_PROOF_REQUIRED');
    const wrong = await root.post('/api/edge/keys', { owner: 'acme' }, { 'x-security-proof': 'not-a-proof' });
    assert.equal(wrong.json.code, 'GW_PROOF_INVALID');
    const badCode = await root.post('/api/staff/verify', { code: '000000', scope: 'StaffSecret' });
    assert.equal(badCode.json.code, 'GW_VERIFY_CODE_INVALID');
    const p = await proof();
    const issued = await root.post('/api/edge/keys', { owner: 'acme' }, { 'x-security-proof': p });
    assert.equal(issued.status, 200, issued.text);
    assert.equal(issued.headers.get('cache-control'), 'no-store');
    key = issued.json.data.key;
    keyId = issued.json.data.key_id;
    secrets.push(key);
    assert.match(key, /^svc_sk_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    // The proof is single-use.
    assert.equal((await root.post('/api/edge/keys', { owner: 'acme' }, { 'x-security-proof': p })).json.code, 'GW_PROOF_INVALID');
    // A channel key-read proof is not a StaffSecret proof.
    await s.gateway.ctx.db.updateTable('staff').set({ totp_last_step: 0 }).where('name', '=', 'edge-root').execute();
    const channelProof = await root.post('/api/staff/verify', { code: codeFor(totp), scope: 'channel.key.read', context: { channel_id: 1 } });
    assert.equal(channelProof.status, 200, channelProof.text);
    assert.equal((await root.post('/api/edge/keys', { owner: 'acme' }, { 'x-security-proof': channelProof.json.data.proof_token })).json.code, 'GW_PROOF_INVALID');
    assert.equal((await root.post('/api/staff/verify', { code: '123456', scope: 'channel.key.read' })).json.code, 'GW_VERIFY_SCOPE_INVALID');
    const list = await root.get('/api/edge/keys?owner=acme');
    assert.deepEqual(list.json.data.map((k: any) => [k.key_id, k.owner, k.revoked_at]), [[keyId, 'acme', null]]);
    assert.ok(!list.text.includes(key.split('.')[1]!));
    assert.deepEqual((await root.get('/api/edge/keys?owner=nobody')).json.data, []);
  });

  test('GS29/GS28: credit (idempotent with a key), wallets with balance, reserved and settled', async () => {
    const c = await root.post('/api/edge/wallets/acme/credit', { amount: 1_000_000 }, { 'idempotency-key': 'credit-1' });
    assert.equal(c.status, 200, c.text);
    assert.equal(c.json.data.balance, 1_000_000);
    const again = await root.post('/api/edge/wallets/acme/credit', { amount: 1_000_000 }, { 'idempotency-key': 'credit-1' });
    assert.equal(again.json.data.balance, 1_000_000);
    const reused = await root.post('/api/edge/wallets/acme/credit', { amount: 5 }, { 'idempotency-key': 'credit-1' });
    assert.equal(reused.json.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await root.post('/api/edge/wallets/acme/credit', { amount: 0 })).status, 400);
    assert.equal((await root.post('/api/edge/wallets/bad%20name/credit', { amount: 1 })).status, 400);
    const w = await root.get('/api/edge/wallets');
    assert.equal(w.json.data.length, 1);
    assert.deepEqual({ ...w.json.data[0], wallet_id: 'x', updated_at: 0 }, {
      owner: 'acme', wallet_id: 'x', balance: 1_000_000, reserved: 0, available: 1_000_000, settled_runs: 0, settled_reserved: 0, settled_charged: 0, updated_at: 0,
    });
  });

  test('the issued key works against the edge (/v1/models, a chat call); GS30 shows its usage', async () => {
    const models = await s.edge.request('GET', '/v1/models', { token: key });
    assert.equal(models.status, 200);
    assert.deepEqual(models.json.data.map((m: any) => m.id), ['chat-pro']);
    const chat = await s.edge.request('POST', '/v1/chat/completions', { token: key, body: { model: 'chat-pro', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(chat.status, 200, chat.text);
    const usage = await root.get('/api/edge/usage?owner=acme&days=7');
    assert.equal(usage.status, 200);
    assert.equal(usage.json.data.lines.length, 1);
    assert.deepEqual({ ...usage.json.data.lines[0], day: 'd' }, { day: 'd', model: 'chat-pro', calls: 1, failed: 0, prompt_tokens: 100, completion_tokens: 20, cost: CHAT_COST });
    const w = (await root.get('/api/edge/wallets')).json.data[0];
    assert.equal(w.balance, 1_000_000 - CHAT_COST);
    assert.equal(w.settled_runs, 1);
    assert.equal(w.settled_charged, CHAT_COST);
    assert.equal((await root.get('/api/edge/usage?owner=nobody')).json.code, 'EDGE_OWNER_NOT_FOUND');
  });

  test('GS27: revoke; the key is refused at once; revoking again is 404', async () => {
    assert.equal((await root.delete(`/api/edge/keys/${keyId}`)).status, 200);
    assert.equal((await s.edge.request('GET', '/v1/models', { token: key })).status, 401);
    const again = await root.delete(`/api/edge/keys/${keyId}`);
    assert.equal(again.status, 404);
    assert.equal(again.json.code, 'EDGE_KEY_NOT_FOUND');
    assert.notEqual((await root.get('/api/edge/keys')).json.data[0].revoked_at, null);
  });

  test('GS31–GS34: webhooks added with a proof (secret once), listed, replayed, removed', async () => {
    assert.equal((await root.post('/api/edge/webhooks', { owner: 'acme', url: 'https://hooks.example.test/in?token=abc' })).json.code, 'GW_PROOF_REQUIRED');
    const badUrl = await root.post('/api/edge/webhooks', { owner: 'acme', url: 'ftp://x' }, { 'x-security-proof': await proof() });
    assert.equal(badUrl.status, 400);
    assert.equal(badUrl.json.code, 'EDGE_ADMIN_INVALID');
    const added = await root.post('/api/edge/webhooks', { owner: 'acme', url: 'https://hooks.example.test/in?token=abc' }, { 'x-security-proof': await proof() });
    assert.equal(added.status, 200, added.text);
    secrets.push(added.json.data.secret);
    const id = added.json.data.endpoint_id;
    const list = await root.get('/api/edge/webhooks');
    assert.deepEqual(list.json.data.map((w: any) => [w.endpoint_id, w.owner, w.removed_at]), [[id, 'acme', null]]);
    const all = await root.post('/api/edge/webhooks/replay', { since: 0 });
    assert.equal(all.status, 200, all.text);
    assert.ok(all.json.data.events >= 1, 'the chat call wrote events');
    assert.equal(all.json.data.queued, all.json.data.events);
    assert.equal((await root.post('/api/edge/webhooks/replay', { event_id: 'no-such-event' })).json.code, 'EDGE_EVENT_NOT_FOUND');
    assert.equal((await root.post('/api/edge/webhooks/replay', {})).json.code, 'EDGE_ADMIN_INVALID');
    assert.equal((await root.delete(`/api/edge/webhooks/${id}`)).status, 200);
    assert.equal((await root.delete(`/api/edge/webhooks/${id}`)).json.code, 'EDGE_WEBHOOK_NOT_FOUND');
    assert.notEqual((await root.get('/api/edge/webhooks')).json.data[0].removed_at, null);
  });

  test('every write is in the gateway audit log with the staff member (no key, no secret, no URL path)', async () => {
    const rows = await s.gateway.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', 'like', 'GS%').orderBy('id').execute();
    const ops = new Set(rows.map((r) => r.operation));
    for (const id of ['GS24', 'GS26', 'GS27', 'GS29', 'GS32', 'GS33', 'GS34']) assert.ok(ops.has(id), `${id} audited`);
    assert.ok(rows.every((r) => r.actor_name === 'edge-root'));
    const issued = rows.find((r) => r.operation === 'GS26' && JSON.parse(r.detail).ok)!;
    assert.deepEqual(JSON.parse(issued.detail), { owner: 'acme', key_id: keyId, ok: true });
    const credits = rows.filter((r) => r.operation === 'GS29' && JSON.parse(r.detail).ok);
    assert.equal(credits.length, 1, 'an idempotent replay is not a second credit');
    const hook = rows.find((r) => r.operation === 'GS32' && JSON.parse(r.detail).ok)!;
    assert.equal(JSON.parse(hook.detail).host, 'hooks.example.test');
    assert.ok(!rows.some((r) => r.detail.includes('token=abc')));
    // The edge records the same changes in its own audit log, with the staff member.
    const edgeRows = await s.edge.ctx.db.selectFrom('edge_audit').selectAll().orderBy('id').execute();
    const byOperation = (op: string) => edgeRows.filter((r) => r.operation === op).map((r) => ({ actor: r.actor, detail: JSON.parse(r.detail) }));
    assert.deepEqual(byOperation('wallet.credit'), [{ actor: 'staff:edge-root', detail: { owner: 'acme', amount: 1_000_000, balance: 1_000_000, credit_id: `staff:${rows[0]!.actor_id}:credit-1` } }]);
    assert.deepEqual(byOperation('model.set').map((r) => [r.actor, r.detail.public_model_id, r.detail.reserve_amount]), [['staff:edge-root', 'chat-pro', 2000], ['staff:edge-root', 'vendor/off', 1]]);
    assert.deepEqual(byOperation('key.issue'), [{ actor: 'staff:edge-root', detail: { owner: 'acme', key_id: keyId } }]);
    assert.deepEqual(byOperation('key.revoke'), [{ actor: 'staff:edge-root', detail: { key_id: keyId } }], 'a revocation that changed nothing is not recorded');
    assert.equal(byOperation('webhook.add')[0]!.detail.host, 'hooks.example.test');
    assert.ok(!JSON.stringify(edgeRows).includes('token=abc'));
  });

  test('GS29: a retry after the gateway failed to record a credit the edge made credits once and answers the same wallet', async () => {
    const gw = s.gateway.ctx.db;
    const credit = () => root.post('/api/edge/wallets/retry-owner/credit', { amount: 700 }, { 'idempotency-key': 'credit-retry' });
    // The gateway's transaction (its idempotency key and audit row) fails after the edge committed the credit.
    await sql`alter table gateway_audit rename to gateway_audit_away`.execute(gw);
    let failed;
    try {
      failed = await credit();
    } finally {
      await sql`alter table gateway_audit_away rename to gateway_audit`.execute(gw);
    }
    assert.equal(failed.status, 500, failed.text);
    const retried = await credit();
    assert.equal(retried.status, 200, retried.text);
    assert.equal(retried.json.data.balance, 700);
    assert.equal((await credit()).json.data.balance, 700);
    const wallet = (await root.get('/api/edge/wallets')).json.data.find((w: any) => w.owner === 'retry-owner');
    assert.equal(wallet.balance, 700, 'credited once');
    // The same key with another amount: refused, nothing added (the gateway no longer knows the key, the edge does).
    await gw.deleteFrom('idempotency_keys').where('key', '=', 'credit-retry').execute();
    const other = await root.post('/api/edge/wallets/retry-owner/credit', { amount: 5 }, { 'idempotency-key': 'credit-retry' });
    assert.equal(other.status, 409, other.text);
    assert.equal(other.json.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await root.get('/api/edge/wallets')).json.data.find((w: any) => w.owner === 'retry-owner').balance, 700);
    const edgeCredits = await s.edge.ctx.db.selectFrom('edge_audit').select('detail').where('operation', '=', 'wallet.credit').execute();
    assert.equal(edgeCredits.filter((r) => JSON.parse(r.detail).owner === 'retry-owner').length, 1, 'one credit in the edge audit');
  });
});

eachDatabase('edge administration when the edge is not served here', (v) => {
  let g: GatewayServer;
  before(async () => {
    g = await startGateway(v);
  });
  after(() => g.close());

  test('GS22 says not served; the others answer 404 GW_EDGE_NOT_SERVED, in English and Chinese', async () => {
    const root = await g.staff('solo', 'root');
    assert.deepEqual((await root.get('/api/edge/status')).json.data, { served: false, admission_mode: null, relay_configured: false });
    for (const [m, p, body] of [
      ['GET', '/api/edge/models', undefined],
      ['PUT', '/api/edge/models', { public_model_id: 'm', reserve_amount: 1 }],
      ['GET', '/api/edge/keys', undefined],
      ['POST', '/api/edge/keys', { owner: 'acme' }],
      ['DELETE', '/api/edge/keys/abc', undefined],
      ['GET', '/api/edge/wallets', undefined],
      ['POST', '/api/edge/wallets/acme/credit', { amount: 1 }],
      ['GET', '/api/edge/usage?owner=acme', undefined],
      ['GET', '/api/edge/webhooks', undefined],
      ['POST', '/api/edge/webhooks', { owner: 'acme', url: 'https://x.test/' }],
      ['DELETE', '/api/edge/webhooks/abc', undefined],
      ['POST', '/api/edge/webhooks/replay', { since: 0 }],
    ] as const) {
      const r = await root.request(m, p, body);
      assert.equal(r.status, 404, `${m} ${p}: ${r.text}`);
      assert.equal(r.json.code, 'GW_EDGE_NOT_SERVED');
      assert.match(r.json.message, /SERVICES=account,gateway,edge/);
    }
    const zh = await root.get('/api/edge/models', { 'accept-language': 'zh-CN' });
    assert.match(zh.json.message, /边缘服务/);
    // Nothing was written, so nothing is audited.
    assert.equal((await g.ctx.db.selectFrom('gateway_audit').selectAll().where('operation', 'like', 'GS%').execute()).length, 0);
  });
});
