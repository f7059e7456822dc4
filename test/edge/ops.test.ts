import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEdge, type EdgeServer } from '../helpers/edge.js';
import { errorCatalog } from '../../src/contract/errors/index.js';
import { edgeCodeOf } from '../../src/contract/errors/edge.js';
import { kitErrors } from '../../src/kit/http/errors.js';

const TOKEN = 'edge-ops-token-0123456789abcdef0123';
const OPS_URLS = ['/metrics', '/api/openapi.json'];

/** The status and code of an ops answer, in the edge's OpenAI-style body. */
async function answerOf(s: EdgeServer, url: string, headers: Record<string, string> = {}) {
  const r = await s.request('GET', url, { headers });
  if (r.status === 200) return 200;
  assert.equal(r.json.requestId, r.headers.get('x-request-id'), r.text);
  assert.equal(typeof r.json.error.message, 'string');
  return `${r.status} ${r.json.error.code}`;
}

describe('edge ops endpoints answer like the account and the gateway (never 500)', () => {
  let open: EdgeServer;
  let guarded: EdgeServer;
  before(async () => {
    open = await startEdge({ name: 'sqlite' });
    guarded = await startEdge({ name: 'sqlite' }, { env: { OPS_TOKEN: TOKEN } });
  });
  after(async () => {
    await open?.close();
    await guarded?.close();
  });

  test('without OPS_TOKEN: a direct loopback peer only; a forwarded request is 403 ops_loopback_only', async () => {
    for (const url of OPS_URLS) {
      assert.equal(await answerOf(open, url), 200, url);
      for (const h of [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9' }, { 'x-real-ip': '203.0.113.9' }] as Record<string, string>[]) {
        assert.equal(await answerOf(open, url, h), '403 ops_loopback_only', `${url} ${JSON.stringify(h)}`);
      }
    }
  });

  test('with OPS_TOKEN: the bearer token only; none or a wrong one is 401 ops_token_required', async () => {
    for (const url of OPS_URLS) {
      assert.equal(await answerOf(guarded, url, { authorization: `Bearer ${TOKEN}` }), 200, url);
      assert.equal(await answerOf(guarded, url), '401 ops_token_required', url);
      assert.equal(await answerOf(guarded, url, { authorization: `Bearer ${TOKEN}x` }), '401 ops_token_required', url);
      const r = await guarded.request('GET', url);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
    }
    assert.ok(!guarded.everything().includes(TOKEN), 'the ops token appears in an answer or the log');
  });
});

/** Source files under `dir` (tests excluded). */
function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
}

test('every code the edge app can answer is an edge code of the catalog (OpenAI type, status, both languages)', () => {
  const isEdgeCode = (code: string) => Boolean(errorCatalog[code]?.type && errorCatalog[code]!.en && errorCatalog[code]!.zh);
  // The kit's own failures (ops guard, bad JSON, timeouts …) reach the edge renamed.
  const unmapped = Object.keys(kitErrors).filter((code) => !isEdgeCode(edgeCodeOf(code)));
  assert.deepEqual(unmapped, [], 'kit codes the edge would answer as internal_error: name them in edgeCodeOfKit');
  // What the edge and the relay port it calls throw.
  const thrown = sources('src/edge').flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/AppError\('(\w+)'/g)].map((m) => ({ code: m[1]!, f })));
  assert.ok(thrown.length > 10, 'the scan finds the edge codes');
  assert.deepEqual(thrown.filter((t) => !isEdgeCode(t.code)).map((t) => `${t.code} (${t.f})`), []);
  const relayCodes = Object.keys(errorCatalog).filter((c) => c.startsWith('relay_'));
  assert.deepEqual(relayCodes.filter((c) => !isEdgeCode(c)), [], 'relay failures the edge passes on');
});
