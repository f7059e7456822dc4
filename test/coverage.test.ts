import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { aliasRoutes, placeholderRoutes, referenceManifest, referenceRoutes } from '../src/contract/coverage.js';
import { operations } from '../src/contract/operations.js';
import { startAccount, type AccountServer } from './helpers/account.js';
import { startEdge, type EdgeServer } from './helpers/edge.js';
import { startGateway, type GatewayServer } from './helpers/gateway.js';

// SPEC's coverage notes and archived design, copied like the endpoint rows (see registry.test.ts).
const SPEC = process.env.SPEC_PATH ?? path.resolve(import.meta.dirname, '../../shared/spec/SPEC.md');
const COPY = path.resolve(import.meta.dirname, 'fixtures/spec-coverage.md');

const specSection = (file: string) => {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const from = lines.indexOf('### Reference-only, dynamic and placeholder routes');
  const to = lines.indexOf('## Authentication');
  return lines.slice(from, to === -1 ? undefined : to).join('\n').trim();
};
const copy = specSection(COPY);
const bullets = copy.split('\n').filter((l) => l.startsWith('- '));
/** "METHOD /path" pairs named in a text, with {param} written as :param and trailing punctuation dropped. */
const routesIn = (text: string) =>
  [...text.matchAll(/\b(GET|POST|PUT|DELETE|PATCH) (\/[^\s,;]*)/g)].map(([, m, p]) => `${m} ${p.replace(/\.$/, '').replace(/\{(\w+)\}/g, ':$1')}`);
const key = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

test('the copied coverage notes are those of SPEC.md', { skip: !fs.existsSync(SPEC) && 'SPEC.md not found beside the repository: the committed copy is used as is' }, () => {
  assert.equal(copy, specSection(SPEC));
});

test('the twelve placeholder routes are exactly those SPEC lists', () => {
  const listed = routesIn(bullets.find((b) => b.startsWith('- Placeholder routes'))!);
  assert.equal(listed.length, 12);
  assert.deepEqual(placeholderRoutes.map(key).sort(), listed.sort());
});

test('every other route the coverage notes name is in the manifest, as an alias of a served operation or reference-only', () => {
  const named = bullets.filter((b) => !b.startsWith('- Placeholder routes')).flatMap(routesIn);
  assert.ok(named.length >= 7, named.join(' | '));
  const listed = new Map(referenceRoutes.map((r) => [key(r), r]));
  for (const route of named) assert.ok(listed.has(route), `${route} is not in src/contract/coverage.ts`);
  const ownRoutes = new Set(['account', 'gateway', 'edge'].flatMap((d) => aliasRoutes(d as 'account').map((a) => a.id)));
  for (const r of referenceRoutes) {
    if (r.state === 'alias') {
      const target = operations.find((o) => o.id === r.servedBy);
      assert.ok(target, `${r.id} names ${r.servedBy}`);
      assert.equal(target.deployable, r.deployable);
      assert.equal(target.method, r.method, `${r.id} and ${target.id} differ in method`);
      const pattern = new RegExp(`^${target.path.replace(/:\w+/g, '[^/]+')}/?$`);
      // Either the target's own route answers the path, or the path is registered as a route of the target.
      if (!pattern.test(r.path)) assert.ok(ownRoutes.has(r.id), `${r.id} ${r.path} is not answered by ${target.id} ${target.path}`);
    } else {
      assert.ok(!operations.some((o) => o.method === r.method && o.path === r.path), `${r.id} is served after all`);
    }
  }
  // The provider-specific OAuth paths of the reference go to A01.
  assert.ok(bullets.some((b) => b.includes('generic A01 route')));
  assert.deepEqual(
    referenceRoutes.filter((r) => r.servedBy === 'A01').map((r) => r.path.split('/').pop()).sort(),
    ['discord', 'github', 'linuxdo', 'oidc'],
  );
  const states = new Set(referenceManifest().map((m) => m.state));
  assert.deepEqual([...states].sort(), ['alias', 'reference-only']);
});

test('the archived public API route is the edge operation E01', () => {
  const row = copy.split('\n').find((l) => l.startsWith('| POST /v1/responses'));
  assert.ok(row);
  const e01 = operations.find((o) => o.id === 'E01')!;
  assert.equal(key(e01), 'POST /v1/responses');
  assert.equal(e01.deployable, 'edge');
  assert.equal(e01.archived, true);
});

describe('what the coverage routes answer', () => {
  const sqlite = { name: 'sqlite' as const };
  let account: AccountServer;
  let gateway: GatewayServer;
  let edge: EdgeServer;
  let edgeKey: string;

  before(async () => {
    [account, gateway, edge] = await Promise.all([startAccount(sqlite), startGateway(sqlite), startEdge(sqlite)]);
    edgeKey = await edge.issueKey('coverage');
  });
  after(async () => {
    await Promise.all([account?.close(), gateway?.close(), edge?.close()]);
  });

  test('account: a reference-only route is a JSON 404; the provider paths reach A01', async () => {
    const status = await fetch(`${account.url}/api/verify/status`, { headers: { accept: 'application/json' } });
    assert.equal(status.status, 404);
    assert.equal((await status.json()).code, 'NOT_FOUND');
    for (const r of referenceRoutes.filter((x) => x.servedBy === 'A01')) {
      const res = await fetch(account.url + r.path + '?code=c&state=s', { headers: { accept: 'application/json' } });
      const body = await res.json();
      assert.notEqual(res.status, 404, r.path);
      assert.match(body.code ?? '', /^OAUTH_/, `${r.path}: ${JSON.stringify(body)}`);
    }
  });

  test('account: the reference\'s WeChat and Telegram paths are their operations (same auth, same answers)', async () => {
    const get = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(account.url + path, { ...init, headers: { accept: 'application/json', 'content-type': 'application/json', ...init.headers } });
      return { status: res.status, json: await res.json() };
    };
    for (const alias of aliasRoutes('account')) {
      const target = operations.find((o) => o.id === alias.servedBy)!;
      const init: RequestInit = alias.method === 'GET' ? {} : { method: alias.method, body: '{"code":"c"}' };
      const [viaAlias, viaTarget] = [await get(alias.path, init), await get(target.path, init)];
      assert.notEqual(viaAlias.status, 404, alias.path);
      assert.deepEqual(viaAlias, viaTarget, `${alias.path} answers like ${target.path}`);
    }
  });

  test('gateway: GET /api/task/ is GS03 (authentication first), not a 404', async () => {
    for (const p of ['/api/task/', '/api/task']) {
      const res = await gateway.anonymous().get(p);
      assert.equal(res.status, 401, p);
      assert.equal(res.json.code, 'GW_UNAUTHORIZED');
    }
  });

  test('edge: placeholders answer 501 api_not_implemented, reference-only routes a JSON 404', async () => {
    for (const r of placeholderRoutes) {
      const res = await edge.request(r.method, r.path.replace(/:\w+/g, 'x1'), { token: edgeKey });
      assert.equal(res.status, 501, key(r));
      assert.equal(res.json.error.code, 'api_not_implemented');
      assert.ok(res.json.requestId);
    }
    for (const r of referenceRoutes.filter((x) => x.deployable === 'edge')) {
      const res = await edge.request(r.method, r.path.replace('/:model:', '/gemini-pro:').replace(/:\w+/g, 'x1'), { token: edgeKey, body: r.method === 'GET' ? undefined : {} });
      assert.equal(typeof res.json.error.message, 'string', res.text);
      if (r.state === 'reference-only') {
        assert.equal(res.status, 404, key(r));
        continue;
      }
      // An alias (R12, the reference's Gemini path) reaches its operation: here E09 refusing an empty body in Google's shape.
      assert.equal(r.servedBy, 'E09');
      assert.deepEqual([res.status, res.json.error.status, res.headers.get('x-error-code')], [400, 'INVALID_ARGUMENT', 'invalid_request_body'], key(r));
    }
  });
});
