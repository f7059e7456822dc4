import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';

const jwt = (claims: Record<string, unknown>) => `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const ACCESS_1 = jwt({ sub: 'u1', n: 1 });
const SECRETS = ['rt-secret-one-0123456789', 'rt-secret-two-0123456789', 'rt-secret-bad-0123456789', ACCESS_1];

eachDatabase('gateway coder channels (G06–G09)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  let ops: StaffClient;
  let valid = ACCESS_1;
  let issued = 0;
  const redeemed = new Set<string>();

  before(async () => {
    up = await startFakeUpstream({
      'POST /oauth/token': later(150, (r: Seen, res) => {
        const form = new URLSearchParams(r.body);
        if (form.get('grant_type') !== 'refresh_token' || form.get('client_id') !== 'test-client') return sendJson(res, 400, { error: 'invalid_request' });
        const rt = form.get('refresh_token');
        if (rt !== 'rt-secret-one-0123456789' && rt !== 'rt-secret-two-0123456789') return sendJson(res, 400, { error: 'invalid_grant', error_description: `Refresh token ${rt} has been revoked` });
        issued++;
        valid = jwt({ sub: 'u1', n: 1 + issued });
        sendJson(res, 200, { access_token: valid, refresh_token: 'rt-secret-two-0123456789', id_token: jwt({ email: 'dev@example.com', 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-from-claims' } }), expires_in: 3600 });
      }),
      'GET /backend-api/wham/usage': (r, res) =>
        r.headers.authorization === `Bearer ${valid}` && r.headers['chatgpt-account-id'] ? sendJson(res, 200, { plan_type: 'plus', rate_limit: { primary_window: { used_percent: 12 } } }) : sendJson(res, 401, { detail: 'token expired' }),
      'GET /backend-api/wham/rate-limit-reset-credits': (r, res) => (r.headers.authorization === `Bearer ${valid}` ? sendJson(res, 200, { credits: 2 }) : sendJson(res, 401, {})),
      'POST /backend-api/wham/rate-limit-reset-credits/consume': (r, res) => {
        const id = r.json?.redeem_request_id;
        if (typeof id !== 'string' || !/^[0-9a-f-]{36}$/.test(id)) return sendJson(res, 400, { detail: 'bad id' });
        const again = redeemed.has(id);
        redeemed.add(id);
        sendJson(res, 200, { consumed: !again, remaining: 2 - redeemed.size });
      },
    });
    s = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_CODER_TOKEN_URL: `${up.url}/oauth/token`, GATEWAY_CODER_CLIENT_ID: 'test-client' } });
    root = await s.staff('root', 'root');
    ops = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = s.everything();
    for (const k of [...SECRETS, valid]) assert.ok(!all.includes(k), `a token leaked: ${k.slice(0, 12)}`);
    await s.close();
    await up.close();
  });

  async function coderChannel(key: Record<string, unknown>) {
    const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 57, name: 'coder', base_url: up.url, models: 'gpt-5-codex', key: JSON.stringify(key) } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const storedKey = async (id: number) => JSON.parse(s.services.channels.openKey((await s.ctx.db.selectFrom('channels').select('key').where('id', '=', id).executeTakeFirstOrThrow()).key));

  test('G06 refreshes the tokens, stores them sealed, fills the account from the claims and answers no token', async () => {
    const id = await coderChannel({ access_token: ACCESS_1, refresh_token: 'rt-secret-one-0123456789', account_id: 'acct-1' });
    const r = await root.post(`/api/channel/${id}/coder/refresh`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.message, 'refreshed');
    assert.equal(r.json.data.account_id, 'acct-1');
    assert.equal(r.json.data.email, 'dev@example.com');
    assert.equal(r.json.data.channel_id, id);
    assert.ok(Date.parse(r.json.data.expires_at) > Date.now());
    const key = await storedKey(id);
    assert.equal(key.access_token, valid);
    assert.equal(key.refresh_token, 'rt-secret-two-0123456789');
    const noAccount = await coderChannel({ access_token: ACCESS_1, refresh_token: 'rt-secret-two-0123456789', account_id: 'x' });
    await s.ctx.db.updateTable('channels').set({ key: s.services.channels.seal(JSON.stringify({ access_token: ACCESS_1, refresh_token: 'rt-secret-two-0123456789', account_id: '' })) }).where('id', '=', noAccount).execute();
    assert.equal((await root.post(`/api/channel/${noAccount}/coder/refresh`)).json.data.account_id, 'acct-from-claims');
  });

  test('G06 concurrent refreshes of one channel call the token endpoint once', async () => {
    const id = await coderChannel({ access_token: ACCESS_1, refresh_token: 'rt-secret-two-0123456789', account_id: 'acct-1' });
    const before = up.to('/oauth/token').length;
    const [a, b] = await Promise.all([root.post(`/api/channel/${id}/coder/refresh`), root.post(`/api/channel/${id}/coder/refresh`)]);
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.equal(up.to('/oauth/token').length - before, 1);
  });

  test('G06 a revoked refresh token is a 502 with the token scrubbed; the key stays as it was', async () => {
    const id = await coderChannel({ access_token: ACCESS_1, refresh_token: 'rt-secret-bad-0123456789', account_id: 'acct-1' });
    const r = await root.post(`/api/channel/${id}/coder/refresh`);
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json.code, 'UPSTREAM_BAD_STATUS');
    assert.equal((await storedKey(id)).refresh_token, 'rt-secret-bad-0123456789');
    const none = await coderChannel({ access_token: ACCESS_1, account_id: 'acct-1' });
    assert.equal((await root.post(`/api/channel/${none}/coder/refresh`)).json.code, 'CHANNEL_CODER_NO_REFRESH_TOKEN');
  });

  test('G07 and G09 read usage; an expired access token is refreshed once and the call repeated', async () => {
    const id = await coderChannel({ access_token: 'at-expired-0123456789', refresh_token: 'rt-secret-two-0123456789', account_id: 'acct-1' });
    const before = up.to('/oauth/token').length;
    const r = await ops.get(`/api/channel/${id}/coder/usage`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.success, true);
    assert.equal(r.json.upstream_status, 200);
    assert.equal(r.json.data.plan_type, 'plus');
    assert.equal(up.to('/oauth/token').length - before, 1);
    const credits = await ops.get(`/api/channel/${id}/coder/usage/reset-credits`);
    assert.deepEqual(credits.json.data, { credits: 2 });
  });

  test('G08 with one Idempotency-Key redeems one credit however often it is sent', async () => {
    const id = await coderChannel({ access_token: valid, refresh_token: 'rt-secret-two-0123456789', account_id: 'acct-1' });
    const h = { 'idempotency-key': 'reset-click-1' };
    const a = await ops.post(`/api/channel/${id}/coder/usage/reset`, undefined, h);
    const b = await ops.post(`/api/channel/${id}/coder/usage/reset`, undefined, h);
    assert.equal(a.json.data.consumed, true, a.text);
    assert.equal(b.json.data.consumed, false, 'the same key sends the same redeem id');
    const c = await ops.post(`/api/channel/${id}/coder/usage/reset`, undefined, { 'idempotency-key': 'reset-click-2' });
    assert.equal(c.json.data.consumed, true);
    assert.equal((await ops.post(`/api/channel/${id}/coder/usage/reset`, undefined, { 'idempotency-key': 'bad key with spaces' })).status, 400);
  });

  test('wrong type, unknown id, permissions', async () => {
    const openai = (await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'o', base_url: up.url, models: 'm', key: 'sk-x-0123456789' } })).json.data.ids[0];
    assert.equal((await ops.get(`/api/channel/${openai}/coder/usage`)).json.code, 'CHANNEL_NOT_CODER');
    assert.equal((await ops.get('/api/channel/999999/coder/usage')).status, 404);
    assert.equal((await ops.get('/api/channel/x/coder/usage')).status, 400);
    assert.equal((await ops.post(`/api/channel/${openai}/coder/refresh`)).status, 403, 'G06 needs ChannelSensitiveWrite');
    const audit = await s.ctx.db.selectFrom('gateway_audit').select('operation').where('operation', 'in', ['G06', 'G07', 'G08', 'G09']).execute();
    for (const op of ['G06', 'G07', 'G08', 'G09']) assert.ok(audit.some((x) => x.operation === op), op);
  });
});
