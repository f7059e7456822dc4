import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { after as later, sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { assertAbilitiesConsistent } from './consistency.js';

const KEY = 'sk-balance-SECRET-0123456789ab';
const ZERO = 'sk-balance-ZERO-0123456789abcd';

const authed = (r: Seen) => r.headers.authorization === `Bearer ${KEY}` || r.headers.authorization === `Bearer ${ZERO}` || r.headers['api-key'] === KEY;
const denied = (r: Seen) => ({ error: { message: `invalid key ${String(r.headers.authorization ?? r.headers['api-key']).replace('Bearer ', '')}`, code: 'invalid_api_key' } });

eachDatabase('gateway balances (G35, G36)', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let closed: GatewayServer;
  let root: StaffClient;
  let ops: StaffClient;

  before(async () => {
    const guard = (fn: (r: Seen, res: any) => void) => (r: Seen, res: any) => (authed(r) ? fn(r, res) : sendJson(res, 401, denied(r)));
    up = await startFakeUpstream({
      'GET /v1/dashboard/billing/subscription': guard((r, res) => sendJson(res, 200, { hard_limit_usd: r.headers.authorization === `Bearer ${ZERO}` ? 5 : 120, has_payment_method: true })),
      'GET /v1/dashboard/billing/usage': guard((r, res) => {
        assert.match(r.url.searchParams.get('start_date') ?? '', /^\d{4}-\d{2}-01$/);
        sendJson(res, 200, { total_usage: 500 });
      }),
      'GET /api/report/getUserOverview': guard((_r, res) => sendJson(res, 200, { success: true, data: { totalPoints: 42.5 } })),
      'GET /dashboard/billing/credit_grants': guard((_r, res) => sendJson(res, 200, { total_remaining: 7, total_available: 8 })),
      'GET /v1/credits': guard((_r, res) => sendJson(res, 200, { data: { total_credits: 50, total_usage: 12.5 } })),
      'GET /v1/users/me/balance': guard((_r, res) => sendJson(res, 200, { code: 0, data: { available_balance: 88.8 } })),
      'GET /v1/user/info': guard((_r, res) => sendJson(res, 200, { code: 20000, data: { totalBalance: '19.25' } })),
      'GET /user/balance': guard((_r, res) => sendJson(res, 200, { is_available: true, balance_infos: [{ currency: 'CNY', total_balance: '110.00' }] })),
      'GET /down/v1/credits': (_r, res) => sendJson(res, 503, { error: { message: 'maintenance' } }),
      'GET /slow/v1/credits': later(3000, (_r, res) => sendJson(res, 200, {})),
      'GET /text/v1/credits': (_r, res) => void res.end('not json'),
    });
    s = await startGateway(v, { env: { GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1', GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_AUTO_DISABLE_CHANNEL: 'true' } });
    closed = await startGateway(v);
    root = await s.staff('root', 'root');
    ops = await s.staff('ops', 'admin');
  });
  after(async () => {
    const all = s.everything() + closed.everything();
    for (const k of [KEY, ZERO]) assert.ok(!all.includes(k), 'a key leaked');
    await s.close();
    await closed.close();
    await up.close();
  });

  async function channel(fields: Record<string, unknown>, mode = 'single') {
    const r = await root.post('/api/channel/', { mode, channel: { type: 1, name: 'b', base_url: up.url, models: 'm', key: KEY, ...fields } });
    assert.equal(r.status, 200, r.text);
    return r.json.data.ids[0] as number;
  }
  const row = (id: number) => s.ctx.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  test('G36 reads each provider\'s balance and stores it', async () => {
    const cases: [number, number, string][] = [
      [1, 115, 'USD'], [8, 115, 'USD'], [10, 42.5, 'points'], [12, 7, 'USD'], [13, 8, 'USD'], [20, 37.5, 'USD'], [25, 88.8, 'CNY'], [40, 19.25, 'CNY'], [43, 110, 'CNY'],
    ];
    for (const [type, balance, currency] of cases) {
      const id = await channel({ type });
      const r = await ops.get(`/api/channel/update_balance/${id}`);
      assert.equal(r.status, 200, `${type}: ${r.text}`);
      assert.equal(r.json.balance, balance, `type ${type}`);
      assert.deepEqual(r.json.data, { balance, currency });
      const stored = await row(id);
      assert.equal(Number(stored.balance), balance);
      assert.ok(Number(stored.balance_updated_time) > 0);
    }
    assert.equal(up.seen.find((x) => x.path === '/api/report/getUserOverview')!.headers['api-key'], KEY);
  });

  test('G36 failures: upstream 401 (key scrubbed), 503, timeout, non-JSON, unsupported type, multi-key, unknown id', async () => {
    const wrong = await channel({ key: 'sk-wrong-0123456789abcdef' });
    const r = await ops.get(`/api/channel/update_balance/${wrong}`);
    assert.equal(r.status, 502);
    assert.equal(r.json.code, 'UPSTREAM_BAD_STATUS');
    assert.equal(r.json.data.upstream_status, 401);
    assert.ok(!r.text.includes('sk-wrong-0123456789abcdef'));
    for (const [base, code] of [['/down', 'UPSTREAM_BAD_STATUS'], ['/slow', 'UPSTREAM_TIMEOUT'], ['/text', 'UPSTREAM_BAD_RESPONSE']] as const) {
      const id = await channel({ type: 20, base_url: up.url + base });
      const x = await ops.get(`/api/channel/update_balance/${id}`);
      assert.equal(x.json.code, code, base + x.text);
      assert.equal(Number((await row(id)).balance_updated_time), 0, 'nothing stored on failure');
    }
    const anthropic = await channel({ type: 14 });
    const u = await ops.get(`/api/channel/update_balance/${anthropic}`);
    assert.equal(u.status, 400);
    assert.equal(u.json.code, 'UPSTREAM_NOT_SUPPORTED');
    const multi = await channel({ key: `${KEY}\n${ZERO}` }, 'multi_to_single');
    assert.equal((await ops.get(`/api/channel/update_balance/${multi}`)).json.code, 'CHANNEL_BALANCE_MULTI_KEY');
    assert.equal((await ops.get('/api/channel/update_balance/999999')).status, 404);
    assert.equal((await ops.get('/api/channel/update_balance/x')).status, 400);
    const c = await closed.staff('root', 'root');
    const cid = (await c.post('/api/channel/', { mode: 'single', channel: { type: 1, name: 'x', base_url: up.url, models: 'm', key: KEY } })).json.data.ids[0];
    assert.equal((await c.get(`/api/channel/update_balance/${cid}`)).json.code, 'UPSTREAM_ADDRESS_REFUSED');
  });

  test('G35 updates every enabled single-key supported channel as a job; an empty balance is disabled when auto_ban allows', async () => {
    await s.ctx.db.deleteFrom('abilities').execute();
    await s.ctx.db.deleteFrom('channels').execute();
    const good = await channel({ type: 20 });
    const zero = await channel({ key: ZERO });
    const zeroNoBan = await channel({ key: ZERO, auto_ban: 0 });
    const failing = await channel({ type: 20, base_url: up.url + '/down' });
    const unsupported = await channel({ type: 14 });
    const multi = await channel({ key: `${KEY}\n${ZERO}` }, 'multi_to_single');
    const manual = await channel({ type: 20 });
    await root.post(`/api/channel/${manual}/status`, { status: 2 });
    const start = await ops.get('/api/channel/update_balance');
    assert.equal(start.status, 200, start.text);
    let job: any;
    for (let i = 0; i < 100; i++) {
      job = (await ops.get(`/api/system_task/${start.json.data.task_id}`)).json.data;
      if (job.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.deepEqual({ ...job.result, failures: undefined }, { done: 5, updated: 3, failed: 1, skipped: 1, disabled: 1, failures: undefined });
    assert.deepEqual(job.result.failures, [{ channel_id: failing, code: 'UPSTREAM_BAD_STATUS' }]);
    assert.equal(Number((await row(good)).balance), 37.5);
    assert.equal(Number((await row(zero)).status), 3);
    assert.equal(JSON.parse((await row(zero)).other_info).status_reason, 'insufficient balance');
    assert.equal(Number((await row(zeroNoBan)).status), 1);
    assert.equal(Number((await row(unsupported)).balance_updated_time), 0);
    assert.equal(Number((await row(multi)).balance_updated_time), 0);
    assert.equal(Number((await row(manual)).balance_updated_time), 0);
    await assertAbilitiesConsistent(s);
  });
});
