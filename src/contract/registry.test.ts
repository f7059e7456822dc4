import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { operations } from './operations.js';
import { assertNoRouteConflicts, operationsOf } from './registry.js';
import { buildManifest } from './manifest.js';
import { implement } from './types.js';

// SPEC.md's endpoint rows, copied into the repository so this check runs wherever the suite runs; when
// shared/ sits beside the repository (or SPEC_PATH names the file), the copy must equal SPEC.md's rows.
const SPEC = process.env.SPEC_PATH ?? path.resolve(import.meta.dirname, '../../../shared/spec/SPEC.md');
const COPY = path.resolve(import.meta.dirname, '../../test/fixtures/spec-endpoints.md');

const endpointRows = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => /^\| [AG]\d\d \|/.test(l));

/** SPEC's endpoint table rows: id, method, path and the auth text. */
function specRows() {
  return endpointRows(COPY).map((l) => {
    const cells = l.split('|').map((c) => c.trim());
    const [method, route] = cells[2].split(' ');
    return { id: cells[1], method, path: route, auth: cells[3] };
  });
}

test('the copied endpoint rows are those of SPEC.md', { skip: !fs.existsSync(SPEC) && 'SPEC.md not found beside the repository: the committed copy is used as is' }, () => {
  assert.deepEqual(endpointRows(COPY), endpointRows(SPEC));
});

const AUTH_TEXT: Record<string, string> = {
  none: 'none',
  optional: 'optional',
  customer: 'customer',
  browser: 'customer and browser session',
  admin: 'Admin',
  root: 'Root',
};

test('the registry declares exactly the operations of SPEC, with their methods, paths and auth', () => {
  const rows = specRows();
  assert.equal(rows.length, 123);
  // E01… (the archived public API, served by the edge) are not rows of the A/G tables.
  const declared = operations.filter((o) => !o.addition && !o.archived);
  assert.deepEqual(declared.map((o) => o.id).sort(), rows.map((r) => r.id).sort());
  for (const row of rows) {
    const op = declared.find((o) => o.id === row.id)!;
    assert.equal(op.method, row.method, `${row.id} method`);
    assert.equal(op.path, row.path, `${row.id} path`);
    assert.equal(op.deployable, row.id.startsWith('A') ? 'account' : 'gateway', `${row.id} deployable`);
    assert.ok(row.auth.startsWith(AUTH_TEXT[op.auth]), `${row.id} auth ${op.auth} vs "${row.auth}"`);
    const permission = /; (Channel\w+|TaskPluginBind)/.exec(row.auth)?.[1];
    assert.equal(op.permission, permission ? `authz.${permission}` : undefined, `${row.id} permission`);
    const scope = /scope (\w+)/.exec(row.auth)?.[1];
    assert.equal(op.scope, scope, `${row.id} scope`);
    assert.equal(!!op.verification, row.auth.includes('sensitive-operation verification'), `${row.id} verification`);
    assert.equal(!!op.originGuard, row.auth.includes('origin check'), `${row.id} origin guard`);
  }
});

test('additions beyond SPEC are marked and do not reuse SPEC ids', () => {
  const specIds = new Set(operations.filter((o) => !o.addition).map((o) => o.id));
  for (const o of operations.filter((x) => x.archived)) assert.ok(/^E\d\d$/.test(o.id) && o.deployable === 'edge', o.id);
  for (const o of operations.filter((x) => x.addition)) assert.ok(!specIds.has(o.id), o.id);
  assert.equal(new Set(operations.map((o) => o.id)).size, operations.length, 'ids are unique');
});

test('no two operations share a method and path', () => {
  assert.doesNotThrow(() => assertNoRouteConflicts(operations));
  assert.throws(
    () => assertNoRouteConflicts([...operations, { id: 'X1', method: 'GET', path: '/api/channel/:other' }]),
    /route conflict: X1 and G05/,
  );
  assert.throws(() => assertNoRouteConflicts([...operations, { id: 'X2', method: 'GET', path: '/api/user/sessions/' }]), /route conflict/);
});

test('implementations must be declared and unique; the rest are planned', () => {
  const handler = async () => ({});
  assert.throws(() => operationsOf('account', [implement('Z99', { handler })]), /not declared/);
  assert.throws(() => operationsOf('account', [implement('A25', { handler }), implement('A25', { handler })]), /twice/);
  const ops = operationsOf('account', [implement('A25', { handler })]);
  assert.equal(ops.find((o) => o.spec.id === 'A25')!.state, 'implemented');
  assert.equal(ops.find((o) => o.spec.id === 'A24')!.state, 'planned');
  const manifest = buildManifest(ops);
  assert.equal(manifest.length, operations.filter((o) => o.deployable === 'account').length);
  const a25 = manifest.find((m) => m.operation === 'A25')!;
  assert.deepEqual(
    Object.keys(a25).sort(),
    ['addition', 'auth', 'cancellable', 'deployable', 'fields', 'metering', 'method', 'operation', 'path', 'permission', 'plugin', 'scope', 'state', 'summary', 'version'],
  );
});

test('a planned operation authenticates first, then answers 501 NOT_IMPLEMENTED; disabled ones 404', async () => {
  const { createHttpApp } = await import('../kit/http/app.js');
  const { createLogger } = await import('../kit/log/logger.js');
  const { errorCatalog } = await import('./errors/index.js');
  const { AppError } = await import('../kit/http/errors.js');
  const { registerOperations } = await import('./registry.js');
  const app = createHttpApp({ logger: createLogger('silent'), trustProxy: false, bodyLimit: 1024, catalog: errorCatalog });
  registerOperations(app, {
    deployable: 'gateway',
    implementations: [],
    enabledOperations: ['G01', 'G05'],
    rateLimits: {},
    authenticate: async (req) => {
      if (req.headers.authorization !== 'Bearer ok') throw new AppError('AUTH_UNAUTHORIZED');
    },
  });
  const anonymous = await app.inject({ method: 'GET', url: '/api/channel/' });
  assert.equal(anonymous.statusCode, 401);
  const planned = await app.inject({ method: 'GET', url: '/api/channel/', headers: { authorization: 'Bearer ok' } });
  assert.equal(planned.statusCode, 501);
  assert.equal(planned.json().code, 'NOT_IMPLEMENTED');
  assert.match(planned.json().message, /G01/);
  const disabled = await app.inject({ method: 'DELETE', url: '/api/channel/7', headers: { authorization: 'Bearer ok' } });
  assert.equal(disabled.statusCode, 404);
  assert.equal(disabled.json().code, 'OPERATION_DISABLED');
  await app.close();
});

test('an alias is one more route of its operation (same auth and handler); an absent body can stand for {}', async () => {
  const { Type } = await import('@sinclair/typebox');
  const { createHttpApp } = await import('../kit/http/app.js');
  const { createLogger } = await import('../kit/log/logger.js');
  const { errorCatalog } = await import('./errors/index.js');
  const { AppError } = await import('../kit/http/errors.js');
  const { registerOperations } = await import('./registry.js');
  const { aliasRoutes } = await import('./coverage.js');
  assert.deepEqual(aliasRoutes('account').map((a) => `${a.id} ${a.method} ${a.path} → ${a.servedBy}`), [
    'R13 GET /api/oauth/wechat → A09',
    'R14 POST /api/oauth/wechat/bind → A10',
    'R15 GET /api/oauth/telegram/login → A08',
    'R16 POST /api/oauth/telegram/bind/start → A07',
    'R17 GET /api/log/self/search → AP10',
  ]);
  assert.deepEqual(aliasRoutes('gateway'), [], 'GET /api/task/ reaches GS03 by its own route');

  const app = createHttpApp({ logger: createLogger('silent'), trustProxy: false, bodyLimit: 1024, catalog: errorCatalog });
  const wiring = {
    deployable: 'account' as const,
    implementations: [
      implement('A10', { schema: { body: Type.Object({ code: Type.String() }) }, handler: async (req) => ({ success: true, body: req.body }) }),
      implement('A37', { schema: { body: Type.Optional(Type.Object({ rp_id: Type.Optional(Type.String()) })) }, bodyMayBeAbsent: true, handler: async (req) => ({ body: req.body }) }),
    ],
    enabledOperations: [],
    rateLimits: {},
    authenticate: async (req: import('fastify').FastifyRequest, spec: { auth: string }) => {
      if (spec.auth !== 'none' && req.headers.authorization !== 'Bearer ok') throw new AppError('AUTH_UNAUTHORIZED');
    },
    aliases: [{ id: 'R14', method: 'POST' as const, path: '/api/oauth/wechat/bind', servedBy: 'A10' }],
  };
  registerOperations(app, wiring);
  const post = (url: string, headers: Record<string, string> = {}, payload?: string) => app.inject({ method: 'POST', url, headers, payload });
  assert.equal((await post('/api/oauth/wechat/bind', { 'content-type': 'application/json' }, '{"code":"c"}')).statusCode, 401);
  const viaAlias = await post('/api/oauth/wechat/bind', { authorization: 'Bearer ok', 'content-type': 'application/json' }, '{"code":"c"}');
  assert.deepEqual(viaAlias.json(), { success: true, body: { code: 'c' } });
  assert.equal((await post('/api/oauth/wechat/bind', { authorization: 'Bearer ok' })).statusCode, 400, 'A10 keeps its required body');
  assert.deepEqual((await post('/api/user/passkey/register/begin', { authorization: 'Bearer ok' })).json(), { body: {} });
  await app.close();

  const clash = createHttpApp({ logger: createLogger('silent'), trustProxy: false, bodyLimit: 1024, catalog: errorCatalog });
  assert.throws(() => registerOperations(clash, { ...wiring, aliases: [{ id: 'X', method: 'POST', path: '/api/user/2fa/setup', servedBy: 'A10' }] }), /route conflict/);
  assert.throws(() => registerOperations(clash, { ...wiring, aliases: [{ id: 'X', method: 'GET', path: '/api/x', servedBy: 'A10' }] }), /not a GET operation/);
  await clash.close();
});
