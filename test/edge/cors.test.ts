import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startEdge, type EdgeServer } from '../helpers/edge.js';

// The /v1 routes answer browsers of any origin (the account console's playground calls the edge from its own
// origin with the customer's key): a preflight is answered before routing, every answer carries
// Access-Control-Allow-Origin, never with credentials; the ops endpoints stay same-origin.
let s: EdgeServer;
before(async () => {
  s = await startEdge({ name: 'sqlite' });
});
after(() => s?.close());

const preflight = (path: string, headers: Record<string, string>) => fetch(s.url + path, { method: 'OPTIONS', headers: { origin: 'https://console.example', 'access-control-request-method': 'POST', ...headers } });

test('a preflight of /v1 routes is 204 with the asked headers allowed, any origin, no credentials', async () => {
  const r = await preflight('/v1/chat/completions', { 'access-control-request-headers': 'authorization, content-type, x-stainless-os' });
  assert.equal(r.status, 204);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.equal(r.headers.get('access-control-allow-headers'), 'authorization, content-type, x-stainless-os');
  assert.match(r.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
  assert.equal(r.headers.get('access-control-allow-credentials'), null);
  // A header list that is not one is not echoed.
  const odd = await preflight('/v1/models', { 'access-control-request-headers': 'authorization, not a header' });
  assert.equal(odd.headers.get('access-control-allow-headers'), 'authorization, content-type');
});

test('answers of /v1 routes carry the origin header, refusals included; other paths do not', async () => {
  const refused = await fetch(s.url + '/v1/chat/completions', { method: 'POST', headers: { origin: 'https://console.example', 'content-type': 'application/json' }, body: '{}' });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  assert.match(refused.headers.get('access-control-expose-headers') ?? '', /x-request-id/);
  const ops = await fetch(s.url + '/metrics', { headers: { origin: 'https://console.example' } });
  assert.equal(ops.headers.get('access-control-allow-origin'), null);
  const notV1 = await fetch(s.url + '/v1x', { method: 'OPTIONS', headers: { origin: 'https://console.example', 'access-control-request-method': 'POST' } });
  assert.notEqual(notV1.status, 204);
  assert.equal(notV1.headers.get('access-control-allow-origin'), null);
});
