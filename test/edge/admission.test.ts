import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eachDatabase } from '../helpers/services.js';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { parseCredential } from '../../src/edge/keys/credentials.js';
import { until } from '../helpers/runs.js';

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The OpenAI-style error body with a stable code and the request id. */
function assertError(r: { status: number; json: any; headers: Headers }, status: number, code: string) {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(r.json.error.code, code);
  assert.equal(typeof r.json.error.message, 'string');
  assert.equal(typeof r.json.error.type, 'string');
  assert.ok('param' in r.json.error);
  assert.equal(r.json.requestId, r.headers.get('x-request-id'));
  assert.deepEqual(Object.keys(r.json).sort(), ['error', 'requestId']);
}

eachDatabase('edge admission', (variant) => {
  let s: EdgeServer;
  let key: string;
  let poorKey: string;
  let n = 0;
  const idem = () => `k-${++n}-${Date.now()}`;

  before(async () => {
    s = await startEdge(variant, { env: { EDGE_MAX_REQUEST_BYTES: '262144' } });
    assert.equal((await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '10')).error, null);
    assert.equal((await s.cli('edge', 'model', 'set', 'off-model', '--reserve', '1', '--disabled')).error, null);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '1000')).error, null);
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'poor', '--amount', '15')).error, null);
    key = await s.issueKey('acme');
    poorKey = await s.issueKey('poor');
  });
  after(async () => {
    // No secret beyond the one-time CLI print: not in any response, not in the log.
    for (const k of [key, poorKey]) {
      assert.ok(!s.everything().includes(k), 'a key appears in a response or the log');
      assert.ok(!s.everything().includes(parseCredential(k)!.secret), 'a key secret appears in a response or the log');
    }
    await s.close();
  });

  test('issued keys have the svc_sk_<22>.<43> form and only a hash is stored', async () => {
    const parsed = parseCredential(key)!;
    assert.match(key, /^svc_sk_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    const row = await s.ctx.db.selectFrom('edge_keys').selectAll().where('key_id', '=', parsed.keyId).executeTakeFirstOrThrow();
    assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(row).includes(parsed.secret));
    const list = await s.cli('edge', 'key', 'list');
    assert.ok(list.lines.some((l) => l.startsWith(parsed.keyId) && l.includes('acme') && l.includes('active')));
    assert.ok(!list.lines.join('\n').includes(parsed.secret));
  });

  test('202 with {requestId, runId, status: reserved, createdAt}; the wallet holds the reservation', async () => {
    const r = await s.respond(key, { publicModelId: 'gpt-test', input: 'hello' }, { 'idempotency-key': idem() });
    assert.equal(r.status, 202);
    assert.deepEqual(Object.keys(r.json).sort(), ['createdAt', 'requestId', 'runId', 'status']);
    assert.equal(r.json.status, 'reserved');
    assert.equal(r.json.requestId, r.headers.get('x-request-id'));
    assert.match(r.json.runId, /^[0-9a-f-]{36}$/);
    assert.ok(!Number.isNaN(Date.parse(r.json.createdAt)));
    const run = await s.ctx.db.selectFrom('edge_runs').selectAll().where('run_id', '=', r.json.runId).executeTakeFirstOrThrow();
    assert.equal(run.api_version, 'v1');
    assert.equal(run.input, 'hello');
    assert.equal(Number(run.reserved_amount), 10);
    const events = await s.ctx.db.selectFrom('edge_outbox').selectAll().where('payload', 'like', `%${r.json.runId}%`).orderBy('sequence').execute();
    assert.deepEqual(events.map((e) => e.type), ['run.created@2.0', 'wallet.reserved@2.0']);
    assert.equal(events[0]!.aggregate_id, r.json.runId);
    assert.equal(Number(events[0]!.aggregate_revision), 1);
    assert.ok(Number(events[1]!.sequence) > Number(events[0]!.sequence));
    const payload = JSON.parse(events[1]!.payload);
    assert.equal(payload.amount, 10);
    assert.equal(payload.reserved, payload.balance - payload.available);
  });

  test("a client's X-Request-Id never names a run: two admissions sending the same one stay two runs, each found by its own requestId", async () => {
    const sent = { 'x-request-id': 'reused-by-client' };
    const a = await s.respond(key, { publicModelId: 'gpt-test', input: 'first' }, { ...sent, 'idempotency-key': idem() });
    const b = await s.respond(key, { publicModelId: 'gpt-test', input: 'second' }, { ...sent, 'idempotency-key': idem() });
    assert.equal(a.status, 202);
    assert.equal(b.status, 202);
    assert.notEqual(a.json.requestId, 'reused-by-client');
    assert.notEqual(a.json.requestId, b.json.requestId);
    assert.equal(a.headers.get('x-request-id'), a.json.requestId);
    const runs = await s.ctx.db.selectFrom('edge_runs').select(['run_id', 'request_id', 'input']).where('run_id', 'in', [a.json.runId, b.json.runId]).execute();
    assert.deepEqual(new Map(runs.map((r) => [r.request_id, r.input])), new Map([[a.json.requestId, 'first'], [b.json.requestId, 'second']]));
  });

  test('credentials: missing, malformed, wrong secret, unknown, revoked keys and customer sessions are refused', async () => {
    const body = { publicModelId: 'gpt-test', input: 'x' };
    const h = { 'idempotency-key': idem() };
    assertError(await s.request('POST', '/v1/responses', { body, headers: h }), 401, 'missing_api_key');
    assertError(await s.request('POST', '/v1/responses', { body, headers: { ...h, authorization: 'Basic abc' } }), 401, 'invalid_api_key');
    assertError(await s.respond('svc_sk_short.secret', body, h), 401, 'invalid_api_key');
    const { keyId, secret } = parseCredential(key)!;
    const flipped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    assertError(await s.respond(`svc_sk_${keyId}.${flipped}`, body, h), 401, 'invalid_api_key');
    assertError(await s.respond(`svc_sk_${'A'.repeat(22)}.${secret}`, body, h), 401, 'invalid_api_key');
    // Customer sessions: an account access token (a JWT), a new-api token, a cookie, an X-Auth-Session header.
    assertError(await s.respond('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig', body, h), 401, 'customer_session_not_accepted');
    assertError(await s.respond('sk-abcdef', body, h), 401, 'customer_session_not_accepted');
    assertError(await s.respond(key, body, { ...h, cookie: 'session=abc' }), 401, 'customer_session_not_accepted');
    assertError(await s.respond(key, body, { ...h, 'x-auth-session': 'sid' }), 401, 'customer_session_not_accepted');
    // Revocation through the server takes effect on its next request; through the CLI (another connection, as
    // another process) once the server sees the key change counter move (test/edge/key-refusal-instances.test.ts).
    const other = await s.issueKey('acme');
    assert.equal((await s.respond(other, body, { 'idempotency-key': idem() })).status, 202);
    assert.equal(await s.services.admin.revokeKey(parseCredential(other)!.keyId, 'test'), true);
    assertError(await s.respond(other, body, { 'idempotency-key': idem() }), 401, 'invalid_api_key');
    const third = await s.issueKey('acme');
    assert.equal((await s.respond(third, body, { 'idempotency-key': idem() })).status, 202);
    assert.equal((await s.cli('edge', 'key', 'revoke', parseCredential(third)!.keyId)).error, null);
    await until("the CLI's revocation seen", async () => (await s.respond(third, body, { 'idempotency-key': idem() })).status === 401);
    assertError(await s.respond(third, body, { 'idempotency-key': idem() }), 401, 'invalid_api_key');
    assert.match((await s.cli('edge', 'key', 'revoke', parseCredential(other)!.keyId)).error ?? '', /no active key/);
    assert.ok(!s.everything().includes(parseCredential(other)!.secret));
  });

  test('idempotency: required, bounded; same body replays the same 202, another body is 409', async () => {
    const body = { publicModelId: 'gpt-test', input: 'same' };
    assertError(await s.respond(key, body), 400, 'idempotency_key_required');
    assertError(await s.respond(key, body, { 'idempotency-key': 'x'.repeat(256) }), 400, 'invalid_idempotency_key');
    assertError(await s.respond(key, body, { 'idempotency-key': 'has space' }), 400, 'invalid_idempotency_key');
    const k = idem();
    const first = await s.respond(key, body, { 'idempotency-key': k });
    assert.equal(first.status, 202);
    // Key order does not make another body (canonical JSON).
    const again = await s.respond(key, { input: 'same', publicModelId: 'gpt-test' }, { 'idempotency-key': k });
    assert.equal(again.status, 202);
    assert.deepEqual(again.json, first.json);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assertError(await s.respond(key, { ...body, input: 'different' }, { 'idempotency-key': k }), 409, 'idempotency_key_conflict');
    const runs = await s.ctx.db.selectFrom('edge_runs').select('run_id').where('run_id', '=', first.json.runId).execute();
    assert.equal(runs.length, 1);
    // Keys are per owner: the same key for another owner is another request.
    const poor = await s.respond(poorKey, body, { 'idempotency-key': k });
    assert.equal(poor.status, 202);
    assert.notEqual(poor.json.runId, first.json.runId);
  });

  test('a replay is answered from its key even after the model was disabled', async () => {
    assert.equal((await s.cli('edge', 'model', 'set', 'gpt-later-off', '--reserve', '10')).error, null);
    const body = { publicModelId: 'gpt-later-off', input: 'kept' };
    const k = idem();
    const first = await s.respond(key, body, { 'idempotency-key': k });
    assert.equal(first.status, 202);
    assert.equal((await s.cli('edge', 'model', 'set', 'gpt-later-off', '--reserve', '10', '--disabled')).error, null);
    const again = await s.respond(key, body, { 'idempotency-key': k });
    assert.equal(again.status, 202, JSON.stringify(again.json));
    assert.deepEqual(again.json, first.json);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assertError(await s.respond(key, body, { 'idempotency-key': idem() }), 400, 'model_disabled');
  });

  test('a key past EDGE_IDEMPOTENCY_TTL_SECONDS is free again, even before the sweep removed it', async () => {
    const k = idem();
    assert.equal((await s.respond(key, { publicModelId: 'gpt-test', input: 'first' }, { 'idempotency-key': k })).status, 202);
    await s.ctx.db.updateTable('edge_idempotency').set({ created_at: Math.floor(Date.now() / 1000) - s.ctx.config.edge.idempotencyTtlSeconds - 5 }).where('key', '=', k).execute();
    const again = await s.respond(key, { publicModelId: 'gpt-test', input: 'another body' }, { 'idempotency-key': k });
    assert.equal(again.status, 202, again.text);
    assert.equal(again.headers.get('idempotent-replayed'), null);
  });

  test('two parallel requests with the same key make one reservation', async () => {
    const k = idem();
    const before = await s.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').select('reserved').where('name', '=', 'acme').executeTakeFirstOrThrow();
    const body = { publicModelId: 'gpt-test', input: 'race' };
    const replies = await Promise.all(Array.from({ length: 6 }, () => s.respond(key, body, { 'idempotency-key': k })));
    for (const r of replies) assert.equal(r.status, 202, JSON.stringify(r.json));
    assert.equal(new Set(replies.map((r) => r.json.runId)).size, 1);
    const after = await s.ctx.db.selectFrom('edge_wallets').innerJoin('edge_owners', 'edge_owners.id', 'edge_wallets.owner_id').select('reserved').where('name', '=', 'acme').executeTakeFirstOrThrow();
    assert.equal(Number(after.reserved) - Number(before.reserved), 10);
    const events = await s.ctx.db.selectFrom('edge_outbox').select('event_id').where('aggregate_id', '=', replies[0]!.json.runId).execute();
    assert.equal(events.length, 1);
  });

  test('traceparent: version 00 accepted and stored on the run and its events; others refused', async () => {
    const r = await s.respond(key, { publicModelId: 'gpt-test', input: 't' }, { 'idempotency-key': idem(), traceparent: TRACE });
    assert.equal(r.status, 202);
    const events = await s.ctx.db.selectFrom('edge_outbox').selectAll().where('payload', 'like', `%${r.json.runId}%`).execute();
    assert.equal(events.length, 2);
    for (const e of events) assert.equal(e.traceparent, TRACE);
    for (const bad of [
      '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      'garbage',
    ]) {
      assertError(await s.respond(key, { publicModelId: 'gpt-test', input: 't' }, { 'idempotency-key': idem(), traceparent: bad }), 400, 'invalid_traceparent');
    }
  });

  test('balance: 402 insufficient_balance writes nothing (no run, no events, key reusable)', async () => {
    const count = async () => Number((await s.ctx.db.selectFrom('edge_outbox').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const k = idem();
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'broke', '--amount', '15')).error, null);
    const brokeKey = await s.issueKey('broke');
    assert.equal((await s.respond(brokeKey, { publicModelId: 'gpt-test', input: 'a' }, { 'idempotency-key': idem() })).status, 202);
    const events = await count();
    const r = await s.respond(brokeKey, { publicModelId: 'gpt-test', input: 'b' }, { 'idempotency-key': k });
    assertError(r, 402, 'insufficient_balance');
    assert.match(r.json.error.message, /reserves 10, 5 is available/);
    assert.equal(await count(), events, 'a failed reservation wrote events');
    assert.equal((await s.ctx.db.selectFrom('edge_idempotency').select('key').where('key', '=', k).execute()).length, 0);
    // After a credit the same key admits.
    assert.equal((await s.cli('edge', 'wallet', 'credit', '--owner', 'broke', '--amount', '100')).error, null);
    assert.equal((await s.respond(brokeKey, { publicModelId: 'gpt-test', input: 'b' }, { 'idempotency-key': k })).status, 202);
    assert.equal(await count(), events + 2);
  });

  test('unknown and disabled models have stable codes', async () => {
    const r = await s.respond(key, { publicModelId: 'nope', input: 'a' }, { 'idempotency-key': idem() });
    assertError(r, 404, 'model_not_found');
    assert.equal(r.json.error.param, 'publicModelId');
    assertError(await s.respond(key, { publicModelId: 'off-model', input: 'a' }, { 'idempotency-key': idem() }), 400, 'model_disabled');
  });

  test('bad input: malformed JSON, wrong types, unknown fields, empty text, huge bodies, other media types → 4xx, never 500', async () => {
    const h = { 'idempotency-key': idem() };
    assertError(await s.request('POST', '/v1/responses', { token: key, raw: '{"publicModelId":', headers: h }), 400, 'invalid_json');
    assertError(await s.request('POST', '/v1/responses', { token: key, raw: '[1,2', headers: h }), 400, 'invalid_json');
    assertError(await s.respond(key, { publicModelId: 5, input: 'a' }, h), 400, 'invalid_request_body');
    assertError(await s.respond(key, { publicModelId: 'gpt-test', input: ['a'] }, h), 400, 'invalid_request_body');
    assertError(await s.respond(key, { publicModelId: 'gpt-test', input: '' }, h), 400, 'invalid_request_body');
    assertError(await s.respond(key, { publicModelId: 'gpt-test', input: '   ' }, h), 400, 'invalid_request_body');
    assertError(await s.respond(key, { publicModelId: 'gpt-test' }, h), 400, 'invalid_request_body');
    assertError(await s.respond(key, [], h), 400, 'invalid_request_body');
    assertError(await s.respond(key, 'text', h), 400, 'invalid_request_body');
    assertError(await s.request('POST', '/v1/responses', { token: key, headers: h }), 400, 'invalid_request_body');
    const extra = await s.respond(key, { publicModelId: 'gpt-test', input: 'a', stream: true }, h);
    assertError(extra, 400, 'invalid_request_body');
    assert.equal(extra.json.error.param, 'stream');
    assertError(await s.respond(key, { publicModelId: 'gpt-test', input: 'a'.repeat(400_000) }, h), 413, 'request_too_large');
    assertError(await s.request('POST', '/v1/responses', { token: key, raw: 'a=b', headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    assertError(await s.respond(key, { publicModelId: 'gpt-test', input: 'a\u0000b' }, h), 400, 'invalid_request_body');
    assert.ok(!s.transcript.some((t) => /stack|at [A-Za-z]+ \(/.test(t)), 'a stack trace in a response');
  });

  test('placeholder routes answer the reference 501; unknown /v1 paths a 404 in the same shape', async () => {
    for (const [method, path] of [
      ['GET', '/v1/files'], ['POST', '/v1/files'], ['DELETE', '/v1/files/f1'], ['GET', '/v1/files/f1'], ['GET', '/v1/files/f1/content'],
      ['GET', '/v1/fine-tunes'], ['POST', '/v1/fine-tunes'], ['GET', '/v1/fine-tunes/ft1'], ['POST', '/v1/fine-tunes/ft1/cancel'],
      ['GET', '/v1/fine-tunes/ft1/events'], ['POST', '/v1/images/variations'], ['DELETE', '/v1/models/m1'],
    ] as const) {
      const r = await s.request(method, path, { token: key, ...(method === 'POST' ? { raw: '--x\r\n', headers: { 'content-type': 'multipart/form-data; boundary=x' } } : {}) });
      assertError(r, 501, 'api_not_implemented');
      assert.equal(r.json.error.type, 'new_api_error');
      assert.equal(r.json.error.param, '');
    }
    assertError(await s.request('GET', '/v1/files'), 401, 'missing_api_key');
    assertError(await s.request('GET', '/v1/unknown/path', { token: key }), 404, 'unknown_route');
    assertError(await s.request('GET', '/v1/responses', { token: key }), 404, 'unknown_route');
  });

  test('OpenAPI lists E01 and the placeholder routes with their state', async () => {
    const r = await s.request('GET', '/api/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.json.paths['/v1/responses'].post['x-state'], 'implemented');
    assert.equal(r.json.paths['/v1/files/{id}/content'].get['x-state'], 'placeholder');
    assert.equal(r.json.paths['/v1/models/{model}'].delete['x-state'], 'placeholder');
  });
});

eachDatabase('edge admission disabled (default mode)', (variant) => {
  let s: EdgeServer;
  before(async () => {
    s = await startEdge(variant, { env: { PUBLIC_ADMISSION_MODE: 'disabled' } });
  });
  after(() => s.close());

  test('POST /v1/responses answers 503 admission_disabled and reserves nothing', async () => {
    await s.cli('edge', 'model', 'set', 'gpt-test', '--reserve', '1');
    await s.cli('edge', 'wallet', 'credit', '--owner', 'acme', '--amount', '10');
    const key = await s.issueKey('acme');
    const r = await s.respond(key, { publicModelId: 'gpt-test', input: 'a' }, { 'idempotency-key': 'k1' });
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'admission_disabled');
    assert.equal(r.json.requestId, r.headers.get('x-request-id'));
    assert.equal((await s.respond('svc_sk_bad', { publicModelId: 'gpt-test', input: 'a' })).json.error.code, 'invalid_api_key');
    assert.equal((await s.ctx.db.selectFrom('edge_runs').select('run_id').execute()).length, 0);
  });
});

test('edge configuration: PUBLIC_ADMISSION_MODE defaults to disabled, the listener to loopback', async () => {
  const { loadConfig } = await import('../../src/config/index.js');
  const c = loadConfig({});
  assert.equal(c.edge.admissionMode, 'disabled');
  assert.equal(c.edge.host, '127.0.0.1');
  assert.equal(c.edge.port, 3002);
  assert.match(c.edge.databaseUrl, /^sqlite:\/\/.*edge\.sqlite$/);
  assert.throws(() => loadConfig({ PUBLIC_ADMISSION_MODE: 'open' }), /PUBLIC_ADMISSION_MODE/);
  assert.throws(() => loadConfig({ EDGE_WEBHOOK_TIMEOUT_MS: '5000', EDGE_DISPATCH_LEASE_MS: '4000' }), /EDGE_DISPATCH_LEASE_MS/);
});

eachDatabase('edge rate limit per key', (variant) => {
  let s: EdgeServer;
  before(async () => {
    s = await startEdge(variant, { env: { EDGE_RATE_LIMIT_PER_MINUTE: '2' } });
  });
  after(() => s.close());

  test('a key over EDGE_RATE_LIMIT_PER_MINUTE gets 429 rate_limited with Retry-After; another key is not affected', async () => {
    const a = await s.issueKey('a');
    const b = await s.issueKey('b');
    assert.equal((await s.request('GET', '/v1/files', { token: a })).status, 501);
    assert.equal((await s.request('GET', '/v1/files', { token: a })).status, 501);
    const limited = await s.request('GET', '/v1/files', { token: a });
    assertError(limited, 429, 'rate_limited');
    assert.match(limited.headers.get('retry-after') ?? '', /^\d+$/);
    assert.equal((await s.request('GET', '/v1/files', { token: b })).status, 501);
  });
});
