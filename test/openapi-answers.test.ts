// The OpenAPI documents against real answers. `npm test` records every JSON answer the shared test clients
// see (API_SAMPLES, test/helpers/api-samples.ts) and runs this file last with API_SAMPLES_CHECK naming
// them; run alone, it first runs SELF_CHECK_FILES to record answers of its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { operations } from '../src/contract/operations.js';
import { errorCatalog } from '../src/contract/errors/index.js';
import { readSamples, type ApiSample } from './helpers/api-samples.js';
import { checkSamples, closeObjects, documents } from './helpers/openapi-check.js';

/** Files whose answers cover every deployable when this file runs alone (a few seconds each). */
const SELF_CHECK_FILES = ['test/gateway/permissions.test.ts', 'test/gateway/relay.test.ts', 'test/account/passkey.test.ts', 'test/account/bindings.test.ts', 'test/edge/admission.test.ts'];

const docs = documents();
const pathsOf = (service: keyof typeof docs) => docs[service].paths as Record<string, Record<string, any>>;
const allOps = Object.values(docs).flatMap((d) => Object.values(d.paths).flatMap((m) => Object.values(m as Record<string, any>)));

test('every operation has a readable, stable operationId: <id>_<name> from the declarations', () => {
  for (const o of operations) assert.match(o.name ?? '', /^[a-z][A-Za-z0-9]*$/, `${o.id} declares no name`);
  const ids = allOps.map((op) => op.operationId as string);
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique across the three documents');
  for (const op of allOps) {
    if (op['x-plugin']) assert.match(op.operationId, /^plugin_[a-z0-9_]+_\d+$/);
    else assert.match(op.operationId, new RegExp(`^${op['x-operation']}_[a-z][A-Za-z0-9]*$`));
  }
  assert.equal(pathsOf('account')['/api/user/login']!.post.operationId, 'A25_login');
  assert.equal(pathsOf('gateway')['/api/channel/']!.get.operationId, 'G01_channels');
});

test('published operationIds stay: test/fixtures/operation-ids.txt lists every one', () => {
  const published = fs.readFileSync('test/fixtures/operation-ids.txt', 'utf8').split('\n').filter(Boolean);
  const now = allOps.filter((op) => !op['x-plugin']).map((op) => op.operationId as string);
  assert.deepEqual(published.filter((id) => !now.includes(id)), [], 'a published operationId is gone: keep the name in src/contract/operations.ts');
  assert.deepEqual(now.filter((id) => !published.includes(id)), [], 'a new operation: add its operationId to test/fixtures/operation-ids.txt');
});

test('every implemented operation documents its success answer and the catalog codes of its errors', () => {
  for (const op of allOps) {
    const statuses = Object.keys(op.responses);
    if (op['x-state'] === 'implemented') assert.ok(statuses.some((s) => /^2\d\d$/.test(s)), `${op.operationId} has no success answer`);
    const errors = statuses.filter((s) => /^[45]\d\d$/.test(s));
    assert.ok(errors.length > 0, `${op.operationId} has no error answer`);
    for (const s of errors) {
      for (const code of op.responses[s]['x-codes']) {
        assert.ok(errorCatalog[code], `${op.operationId}: ${code} is not a catalog code`);
        assert.equal(String(errorCatalog[code]!.status), s, `${op.operationId}: ${code} is listed under ${s}`);
      }
    }
  }
  // What every operation of an auth class can answer, and what a module throws.
  const g05 = pathsOf('gateway')['/api/channel/{id}']!.get.responses;
  assert.ok(g05['401']['x-codes'].includes('GW_UNAUTHORIZED') && g05['403']['x-codes'].includes('GW_FORBIDDEN'));
  assert.ok(g05['404']['x-codes'].includes('CHANNEL_NOT_FOUND'));
  assert.ok(pathsOf('account')['/api/user/sessions']!.get.responses['403']['x-codes'].includes('AUTH_SESSION_REQUIRED'));
  assert.ok(pathsOf('edge')['/v1/responses']!.post.responses['401']['x-codes'].includes('invalid_api_key'));
});

test('every catalog code the product throws is listed by an operation that can answer it', () => {
  const listed = new Set(allOps.flatMap((op) => Object.values<any>(op.responses).flatMap((r) => r['x-codes'] ?? [])));
  // Answered by the operational endpoints (/metrics, /api/openapi.json), and by planned operations only.
  const elsewhere = new Set(['OPS_TOKEN_REQUIRED', 'OPS_LOOPBACK_ONLY', 'NOT_IMPLEMENTED']);
  const sources = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  const unlisted = sources('src').flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/AppError\('(\w+)'/g)].map((m) => m[1]!).filter((c) => !listed.has(c) && !elsewhere.has(c)).map((c) => `${c} (${f})`));
  assert.deepEqual(unlisted, [], 'add them to the `errors` of the operations that throw them');
});

test('the documents are OpenAPI 3.1 with shared components every reference resolves to', () => {
  const ajv = new Ajv2020({ strict: false });
  for (const [service, doc] of Object.entries(docs)) {
    assert.equal(doc.openapi, '3.1.0');
    const text = JSON.stringify(doc);
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) assert.ok(doc.components.schemas[name!], `${service}: ${name} is referenced but not defined`);
    // Every schema is valid JSON Schema 2020-12.
    for (const [name, schema] of Object.entries(doc.components.schemas)) assert.ok(ajv.validateSchema(schema), `${service} ${name}: ${ajv.errorsText()}`);
  }
  for (const name of ['Envelope', 'Error', 'Channel', 'ChannelPage', 'Job']) assert.ok(docs.gateway.components.schemas[name], name);
  for (const name of ['Envelope', 'Error', 'Session', 'UserView', 'AuthBundle', 'LoginChallenge', 'SecurityProof']) assert.ok(docs.account.components.schemas[name], name);
  for (const name of ['OpenAIError', 'Run', 'Admission', 'ChatCompletion', 'ModelList']) assert.ok(docs.edge.components.schemas[name], name);
});

test('the check refuses answers the documents do not describe', () => {
  const channel = { success: true, message: '', data: { id: 1 } };
  const bad: ApiSample[] = [
    { method: 'GET', path: '/api/user/sessions', status: 200, body: { success: true, message: '', data: [{ sid: 's' }] } },
    { method: 'GET', path: '/api/channel/ops', status: 200, body: { success: true, message: '', data: { retry_times: 2, extra: 1 } } },
    { method: 'GET', path: '/api/channel/7', status: 404, body: { success: false, code: 'TWOFA_NOT_ENABLED', message: 'x' } },
    { method: 'GET', path: '/api/channel/7', status: 418, body: channel },
  ];
  const { failures } = checkSamples(bad, docs);
  assert.deepEqual(failures.map((f) => `${f.operationId} ${f.status}`), ['A43_sessions 200', 'G26_channelOps 200', 'G05_channel 404', 'G05_channel 418']);
  assert.match(failures[1]!.problem, /additional properties/);
  assert.match(failures[2]!.problem, /code TWOFA_NOT_ENABLED is not documented/);
  // Objects the documents leave open stay open; closed ones are closed.
  assert.equal(closeObjects({ type: 'object', properties: {}, additionalProperties: true }).additionalProperties, true);
  assert.equal(closeObjects({ type: 'object', properties: {} }).additionalProperties, false);
});

/** The answers to check: the suite's (API_SAMPLES_CHECK), else (none there) those of SELF_CHECK_FILES run now. */
function samples(): ApiSample[] {
  const given = process.env.API_SAMPLES_CHECK ? readSamples(process.env.API_SAMPLES_CHECK) : [];
  if (given.length) return given;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'api-samples-'));
  try {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-force-exit', '--test-reporter=dot', ...SELF_CHECK_FILES], {
      // Without NODE_TEST_CONTEXT: the nested runner runs its files itself instead of reporting to this one.
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT')), API_SAMPLES: dir },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, `the files recording answers failed:\n${run.stdout.slice(-4000)}`);
    return readSamples(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('real answers seen in the tests validate against the documents', { timeout: 600_000 }, () => {
  const seen = samples();
  assert.ok(seen.length > 0, 'no answers were recorded');
  const { failures, seen: operationsSeen } = checkSamples(seen, docs);
  const report = failures.map((f) => `${f.operationId} ${f.status} ${f.path}: ${f.problem}`).join('\n');
  assert.equal(failures.length, 0, `answers the documents do not describe:\n${report}`);
  // How much of the documents the answers exercised (shown with --test-reporter=spec).
  const implemented = allOps.filter((op) => op['x-state'] === 'implemented');
  const succeeded = implemented.filter((op) => [...(operationsSeen.get(op.operationId) ?? [])].some((s) => s < 300));
  console.log(`${seen.length} answers of ${operationsSeen.size} operations validated; a success of ${succeeded.length} of the ${implemented.length} implemented ones among them`);
});
