import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Dispatcher } from '../../src/edge/webhooks/dispatcher.js';
import { startAccount, type AccountServer } from '../helpers/account.js';
import { startGateway, type GatewayServer, type StaffClient } from '../helpers/gateway.js';
import { sendJson, startFakeUpstream, type FakeUpstream, type Seen } from '../helpers/fake-upstream.js';
import { scrape, series, value, type Scrape } from '../helpers/metrics.js';
import { RELAY_ENV, relay } from '../helpers/relay.js';
import { admit } from '../helpers/runs.js';
import { eachDatabase } from '../helpers/services.js';
import { CHAT_COST, startStack, type Stack } from '../helpers/stack.js';
import { parseYamlSubset } from '../helpers/yaml-subset.js';

/** Every series name some deployable's scrape can hold: what the dashboard and the alert rules may use. */
const exported = new Set<string>();
const collect = (s: Scrape) => s.names.forEach((n) => exported.add(n));

describe('account /metrics: route labels', () => {
  let s: AccountServer;
  before(async () => {
    s = await startAccount({ name: 'sqlite' });
    await s.createUser('metrics', 'metrics password');
  });
  after(() => s.close());

  test('requests are counted and timed by operation, method and route pattern; unmatched ones share one route', async () => {
    const b = s.browser();
    assert.equal((await b.login('metrics', 'wrong password')).json.success, false);
    await b.login('metrics', 'metrics password');
    assert.equal((await b.get('/api/nope/123')).status, 404);
    assert.equal((await b.get('/api/nope/456')).status, 404);
    const m = await scrape(s.url);
    collect(m);
    assert.equal(value(m, 'http_requests_total', { operation: 'A25', method: 'POST', route: '/api/user/login', status: '200' }), 2);
    assert.equal(value(m, 'http_request_duration_seconds_count', { operation: 'A25', method: 'POST', route: '/api/user/login' }), 2);
    assert.equal(value(m, 'http_requests_total', { operation: 'other', method: 'GET', route: 'unmatched', status: '404' }), 2);
    assert.ok(!m.text.includes('/api/nope'), 'a raw URL became a label');
    assert.equal(value(m, 'http_requests_total', { deployable: 'account', operation: 'A25', status: '200' }), 2);
  });
});

const GOOD = 'sk-metrics-GOOD-0123456789abcdef';
const BAD = 'sk-metrics-BAD-0123456789abcdefgh';

eachDatabase('gateway /metrics: channels, supplier calls, jobs and route labels', (v) => {
  let up: FakeUpstream;
  let s: GatewayServer;
  let root: StaffClient;
  const ids: Record<string, number> = {};

  before(async () => {
    const chat = (r: Seen, res: http.ServerResponse) => {
      if (String(r.headers.authorization).includes(BAD)) return sendJson(res, 401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } });
      sendJson(res, 200, { id: 'c1', object: 'chat.completion', created: 1, model: r.json?.model, choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } });
    };
    up = await startFakeUpstream({
      'POST /v1/chat/completions': chat,
      'GET /v1/models': (_r, res) => sendJson(res, 200, { object: 'list', data: [{ id: 'mx-good' }, { id: 'mx-new' }] }),
      'GET /v1/dashboard/billing/subscription': (_r, res) => sendJson(res, 200, { hard_limit_usd: 10, has_payment_method: true }),
      'GET /v1/dashboard/billing/usage': (_r, res) => sendJson(res, 200, { total_usage: 250 }),
    });
    s = await startGateway(v, { env: { ...RELAY_ENV, GATEWAY_RELAY_ROUTE_CACHE_MS: '0', GATEWAY_AUTO_DISABLE_CHANNEL: 'true' } });
    root = await s.staff('root', 'root');
    for (const [name, key] of [['good', GOOD], ['bad', BAD], ['off', GOOD]] as const) {
      const r = await root.post('/api/channel/', { mode: 'single', channel: { type: 1, name, base_url: up.url, models: `mx-${name}`, key } });
      assert.equal(r.status, 200, r.text);
      ids[name] = r.json.data.ids[0];
    }
    await s.services.ratios.setCurrent({ model_ratio: { 'mx-good': 1, 'mx-bad': 1, 'mx-off': 1 } });
  });
  after(async () => {
    await s.close();
    await up.close();
  });

  test('channel gauges, channel tests, supplier calls by family, the test job, relay errors and route labels', async () => {
    assert.equal((await root.post(`/api/channel/${ids.off}/status`, { status: 2 })).json.data.changed, true);
    // G33 with the automatic rules on: the bad key's 401 invalid_api_key disables its channel.
    const started = await root.get('/api/channel/test');
    assert.equal(started.status, 200, started.text);
    const task = started.json.data.task_id;
    let job: any;
    for (let i = 0; i < 200; i++) {
      job = (await root.get(`/api/system_task/${task}`)).json.data;
      if (job.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.result.disabled, 1);
    assert.equal((await root.get(`/api/channel/test/${ids.good}`)).json.success, true); // G34
    assert.equal((await root.get(`/api/channel/fetch_models/${ids.good}`)).json.success, true); // G17
    const failed = await root.post('/api/channel/fetch_models', { type: 1, base_url: `${up.url}/nowhere`, key: GOOD }); // G16: 404 upstream
    assert.equal(failed.json.success, false);
    assert.equal((await root.get(`/api/channel/update_balance/${ids.good}`)).json.success, true); // G36
    assert.equal((await relay(s.url, '/chat/completions', { model: 'mx-good', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
    assert.equal((await relay(s.url, '/chat/completions', { model: 'mx-bad', messages: [{ role: 'user', content: 'hi' }] })).status, 503);

    const m = await scrape(s.url);
    collect(m);
    assert.deepEqual(
      series(m, 'gateway_channels').map((x) => [x.labels.status, x.value]).sort(),
      [['auto_disabled', 1], ['enabled', 1], ['manual_disabled', 1]],
    );
    assert.equal(value(m, 'gateway_model_enabled_channels', { model: 'mx-good' }), 1);
    assert.equal(value(m, 'gateway_model_enabled_channels', { model: 'mx-bad' }), 0);
    assert.equal(value(m, 'gateway_model_enabled_channels', { model: 'mx-off' }), 0);
    // G33 tested good and bad (not the channel disabled by hand), G34 good again.
    assert.equal(value(m, 'gateway_upstream_calls_total', { call: 'test', family: 'openai', outcome: 'ok' }), 2);
    assert.equal(value(m, 'gateway_upstream_calls_total', { call: 'test', family: 'openai', outcome: 'bad_status' }), 1);
    assert.equal(value(m, 'gateway_channel_test_seconds_count', { family: 'openai', outcome: 'ok' }), 2);
    assert.equal(value(m, 'gateway_channel_test_seconds_count', { family: 'openai', outcome: 'bad_status' }), 1);
    assert.equal(value(m, 'gateway_upstream_calls_total', { call: 'models', family: 'openai', outcome: 'ok' }), 1);
    assert.equal(value(m, 'gateway_upstream_calls_total', { call: 'models', family: 'openai', outcome: 'bad_status' }), 1);
    assert.equal(value(m, 'gateway_upstream_calls_total', { call: 'balance', family: 'openai', outcome: 'ok' }), 1);
    assert.equal(value(m, 'gateway_jobs_started_total', { type: 'channel_test' }), 1);
    assert.equal(value(m, 'gateway_jobs_finished_total', { type: 'channel_test', status: 'succeeded' }), 1);
    assert.equal(value(m, 'gateway_jobs_running', { type: 'channel_test' }), 0);
    assert.equal(value(m, 'gateway_job_duration_seconds_count', { type: 'channel_test' }), 1);
    assert.equal(value(m, 'relay_calls_total', { model: 'mx-good', channel: String(ids.good), outcome: 'ok' }), 1);
    assert.equal(value(m, 'relay_refused_total', { code: 'relay_no_channel' }), 1);
    assert.equal(value(m, 'http_requests_total', { operation: 'G34', method: 'GET', route: '/api/channel/test/:id', status: '200' }), 1);
    assert.equal(value(m, 'http_requests_total', { operation: 'G11', method: 'POST', route: '/api/channel/:id/status', status: '200' }), 1);
    assert.equal(value(m, 'http_request_duration_seconds_count', { operation: 'G36', method: 'GET', route: '/api/channel/update_balance/:id' }), 1);

    // A channel write through the API drops the cached counts: the next scrape sees it at once.
    assert.equal((await root.post(`/api/channel/${ids.off}/status`, { status: 1 })).json.data.changed, true);
    const again = await scrape(s.url);
    assert.equal(value(again, 'gateway_channels', { status: 'enabled' }), 2);
    assert.equal(value(again, 'gateway_channels', { status: 'manual_disabled' }), 0);
    assert.equal(value(again, 'gateway_model_enabled_channels', { model: 'mx-off' }), 1);
  });
});

/** A webhook receiver on loopback answering `status`. */
async function receiver(status: number) {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, received: () => received, close: () => new Promise((r) => server.close(r)) };
}

eachDatabase('edge /metrics: admissions, reservations, settlements, webhook deliveries, the run worker and the outbox backlog', (v) => {
  let st: Stack;
  let ok: Awaited<ReturnType<typeof receiver>>;
  let failing: Awaited<ReturnType<typeof receiver>>;

  before(async () => {
    st = await startStack(v, { edgeEnv: { EDGE_WEBHOOK_MAX_ATTEMPTS: '1' } });
    ok = await receiver(204);
    failing = await receiver(500);
  });
  after(async () => {
    await st.close();
    await ok.close();
    await failing.close();
  });

  test('counts and units by outcome, worker runs and takeovers, delivery results, backlog gauges, route labels', async () => {
    const s = st.edge;
    for (const [id, reserve] of [['gpt-4o', 500], ['broken-model', 100]] as const) assert.equal((await s.cli('edge', 'model', 'set', id, '--reserve', String(reserve))).error, null);
    for (const [o, amount] of [['acme', 100_000], ['hooked', 100_000], ['poor', 10]] as const) assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', o, '--amount', String(amount))).error, null);
    const acme = await s.issueKey('acme');
    const hooked = await s.issueKey('hooked');
    const poor = await s.issueKey('poor');
    assert.equal((await s.cli('edge', 'webhook', 'add', '--owner', 'acme', '--url', ok.url)).error, null);
    assert.equal((await s.cli('edge', 'webhook', 'add', '--owner', 'hooked', '--url', failing.url)).error, null);

    // Admissions: two admitted, a replay, a conflicting replay, a refusal for money and one for the model.
    const key = crypto.randomUUID();
    assert.equal((await s.respond(acme, { publicModelId: 'gpt-4o', input: 'hi' }, { 'idempotency-key': key })).status, 202);
    assert.equal((await s.respond(acme, { publicModelId: 'gpt-4o', input: 'hi' }, { 'idempotency-key': key })).headers.get('idempotent-replayed'), 'true');
    assert.equal((await s.respond(acme, { publicModelId: 'gpt-4o', input: 'other' }, { 'idempotency-key': key })).json.error.code, 'idempotency_key_conflict');
    assert.equal((await s.respond(poor, { publicModelId: 'gpt-4o', input: 'hi' }, { 'idempotency-key': crypto.randomUUID() })).json.error.code, 'insufficient_balance');
    assert.equal((await s.respond(acme, { publicModelId: 'nope', input: 'hi' }, { 'idempotency-key': crypto.randomUUID() })).json.error.code, 'model_not_found');
    await admit(s, acme, 'broken-model');
    // A run whose worker died (its lease ran out): the next worker takes it over.
    const orphan = await admit(s, acme, 'gpt-4o');
    await s.ctx.db.updateTable('edge_runs').set({ status: 'running', lease_owner: 'gone', lease_until: Date.now() - 1, attempts: 1 }).where('run_id', '=', orphan.runId).execute();
    await s.worker!.tick();
    await s.worker!.drain();
    // A sync call (reserved and settled at once).
    const call = await s.request('POST', '/v1/chat/completions', { token: acme, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(call.status, 200, call.text);
    // The hooked owner's events: delivered to nobody (its receiver fails, one attempt: dead).
    await admit(s, hooked, 'gpt-4o');
    await new Dispatcher(s.ctx).drain();
    // Left pending: the events of one more admission.
    await admit(s, acme, 'broken-model');
    const pending = await s.ctx.db.selectFrom('edge_deliveries').select(['created_at']).where('status', '=', 'pending').execute();
    assert.ok(pending.length > 0);

    const m = await scrape(s.url);
    collect(m);
    assert.equal(value(m, 'edge_admissions_total', { outcome: 'admitted' }), 5);
    assert.equal(value(m, 'edge_admissions_total', { outcome: 'replayed' }), 1);
    assert.equal(value(m, 'edge_admissions_total', { outcome: 'idempotency_key_conflict' }), 1);
    assert.equal(value(m, 'edge_admissions_total', { outcome: 'insufficient_balance' }), 1);
    assert.equal(value(m, 'edge_admissions_total', { outcome: 'model_not_found' }), 1);
    assert.equal(value(m, 'edge_reservations_total', { kind: 'async', outcome: 'reserved' }), 5);
    assert.equal(value(m, 'edge_reservations_total', { kind: 'async', outcome: 'insufficient_balance' }), 1);
    assert.equal(value(m, 'edge_reservations_total', { kind: 'sync', outcome: 'reserved' }), 1);
    assert.equal(value(m, 'edge_reserved_units_total', { kind: 'async' }), 500 + 100 + 500 + 500 + 100);
    assert.equal(value(m, 'edge_reserved_units_total', { kind: 'sync' }), 500);
    // Worker: the first gpt-4o run and the orphan succeeded, the broken-model run failed; the sync call succeeded.
    assert.equal(value(m, 'edge_settlements_total', { outcome: 'succeeded', source: 'worker' }), 2);
    assert.equal(value(m, 'edge_settlements_total', { outcome: 'failed', source: 'worker' }), 1);
    assert.equal(value(m, 'edge_settlements_total', { outcome: 'succeeded', source: 'sync' }), 1);
    assert.equal(value(m, 'edge_settlement_units_total', { outcome: 'succeeded', part: 'charged' }), 3 * CHAT_COST);
    assert.equal(value(m, 'edge_settlement_units_total', { outcome: 'succeeded', part: 'released' }), 3 * (500 - CHAT_COST));
    assert.equal(value(m, 'edge_settlement_units_total', { outcome: 'failed', part: 'charged' }), 0);
    assert.equal(value(m, 'edge_settlement_units_total', { outcome: 'failed', part: 'released' }), 100);
    assert.equal(value(m, 'edge_run_worker_taken_total'), 3);
    assert.equal(value(m, 'edge_run_worker_takeovers_total'), 1);
    assert.equal(value(m, 'edge_run_worker_settled_total', { status: 'succeeded' }), 2);
    assert.equal(value(m, 'edge_run_worker_settled_total', { status: 'failed' }), 1);
    assert.equal(value(m, 'edge_run_worker_running'), 0);
    // The six reservations and four settlements above (and the refused ones) were pieces of ledger batches.
    const pieces = value(m, 'edge_ledger_pieces_total');
    assert.ok(pieces >= 6 + 4, String(pieces));
    assert.ok(value(m, 'edge_ledger_batches_total') >= 1 && value(m, 'edge_ledger_batches_total') <= pieces);
    // Dispatched: acme's events (admissions, run starts, settlements, the sync call's); hooked's two, dead.
    const delivered = value(m, 'edge_webhook_deliveries_total', { result: 'delivered' });
    assert.equal(delivered, ok.received());
    assert.ok(delivered >= 10, String(delivered));
    assert.equal(value(m, 'edge_webhook_deliveries_total', { result: 'dead' }), 2);
    assert.equal(failing.received(), 2);
    assert.equal(value(m, 'edge_webhook_dead_deliveries'), 2);
    assert.equal(value(m, 'edge_outbox_pending_deliveries'), pending.length);
    const oldest = (Date.now() - Math.min(...pending.map((p) => Number(p.created_at)))) / 1000;
    const age = value(m, 'edge_outbox_oldest_pending_age_seconds');
    assert.ok(age >= 0 && age <= oldest + 1, `${age} vs ${oldest}`);
    assert.equal(value(m, 'http_requests_total', { operation: 'E01', method: 'POST', route: '/v1/responses', status: '202' }), 6);
    assert.equal(value(m, 'http_requests_total', { operation: 'E04', method: 'POST', route: '/v1/chat/completions', status: '200' }), 1);
    collect(await scrape(st.gateway.url));
  });
});

/** Metric names a PromQL expression reads (label matchers, ranges, grouping lists, functions and keywords left out). */
function metricNames(expr: string): string[] {
  const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
  let e = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/'(?:[^'\\]|\\.)*'/g, "''");
  e = e.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '');
  e = e.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names: string[] = [];
  for (const m of e.matchAll(/(?<![\w.$])[a-zA-Z_:][\w:]*/g)) {
    if (e.slice(m.index! + m[0].length).trimStart().startsWith('(')) continue;
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.push(m[0]);
  }
  return names;
}

function balanced(expr: string) {
  let depth = 0;
  for (const c of expr.replace(/"(?:[^"\\]|\\.)*"/g, '')) {
    if (c === '(' || c === '{' || c === '[') depth++;
    if (c === ')' || c === '}' || c === ']') depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}

describe('docs/grafana-dashboard.json and docs/prometheus-alerts.yml', () => {
  test('parse, and read only metrics the deployables export', () => {
    assert.ok(exported.has('http_requests_total') && exported.has('edge_outbox_pending_deliveries') && exported.has('gateway_channels'), 'the scrapes above ran');
    const dashboard = JSON.parse(fs.readFileSync('docs/grafana-dashboard.json', 'utf8'));
    const exprs: string[] = [];
    const walk = (panels: any[]) => {
      for (const p of panels ?? []) {
        for (const t of p.targets ?? []) exprs.push(t.expr);
        walk(p.panels);
      }
    };
    walk(dashboard.panels);
    assert.ok(exprs.length >= 20, `${exprs.length} dashboard queries`);
    for (const v of dashboard.templating?.list ?? []) {
      if (v.type !== 'query') continue;
      const q = typeof v.query === 'string' ? v.query : v.query.query;
      const m = /^label_values\((\w+),\s*\w+\)$/.exec(q);
      assert.ok(m, `template query ${q}`);
      exprs.push(m[1]!);
    }

    const alerts = parseYamlSubset(fs.readFileSync('docs/prometheus-alerts.yml', 'utf8')) as { groups: { name: string; rules: { alert: string; expr: string; for?: string; labels: { severity: string }; annotations: { summary: string; description: string } }[] }[] };
    const rules = alerts.groups.flatMap((g) => g.rules);
    const names = rules.map((r) => r.alert);
    for (const wanted of ['OutboxBacklogGrowing', 'ModelWithoutEnabledChannel', 'RelayNoChannel', 'BreakerFlapping', 'WebhookDeliveriesDying', 'SettlementsFailing', 'RelayErrorRatioHigh']) assert.ok(names.includes(wanted), `alert ${wanted}`);
    assert.equal(new Set(names).size, names.length, 'alert names repeat');
    for (const r of rules) {
      assert.ok(r.expr && r.labels?.severity && r.annotations?.summary && r.annotations?.description, `alert ${r.alert} lacks a field`);
      if (r.for !== undefined) assert.match(r.for, /^\d+[smh]$/);
      exprs.push(r.expr);
    }

    for (const expr of exprs) {
      assert.ok(typeof expr === 'string' && expr.trim() && balanced(expr), `expression ${expr}`);
      const used = metricNames(expr);
      assert.ok(used.length > 0, `no metric in ${expr}`);
      for (const name of used) assert.ok(exported.has(name), `${name} (in ${expr.trim()}) is not exported`);
    }
  });
});
