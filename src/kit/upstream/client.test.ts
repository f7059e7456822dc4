import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { after as later, hugeBody, sendJson, startConnectProxy, startFakeUpstream, type FakeUpstream } from '../../../test/helpers/fake-upstream.js';
import { ByteBudget } from './budget.js';
import { createUpstreamClient } from './client.js';
import { UpstreamError } from './errors.js';
import { scrubSecrets } from './scrub.js';

let fake: FakeUpstream;
const open = createUpstreamClient({ policy: { allowPrivate: true, allow: [] }, timeoutMs: 2000, maxBytes: 64 * 1024 });
const closed = createUpstreamClient({ policy: { allowPrivate: false, allow: [] }, timeoutMs: 2000, maxBytes: 64 * 1024 });

before(async () => {
  fake = await startFakeUpstream({
    'GET /ok': (_r, res) => sendJson(res, 200, { ok: true }),
    'GET /slow': later(5000, (_r, res) => sendJson(res, 200, {})),
    'GET /huge': hugeBody(1024 * 1024),
    'GET /declared': (_r, res) => {
      res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
      res.end();
    },
    'GET /redirect': (_r, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    },
    'GET /stream': (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"a":1}\n{"b"');
      setTimeout(() => res.end(':2}\r\n{"c":3}'), 20);
    },
  });
});
after(async () => {
  await fake.close();
  await open.close();
  await closed.close();
});

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UpstreamError, String(e));
    return e;
  }
  assert.fail('expected an UpstreamError');
}

test('a plain request reads status and body; redirects are returned, never followed', async () => {
  const r = await open.request({ url: fake.url + '/ok' });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.text), { ok: true });
  const redirect = await open.request({ url: fake.url + '/redirect' });
  assert.equal(redirect.status, 302);
});

test('deadline, body cap (declared and streamed) and unreachable hosts fail with their kind', async () => {
  const started = Date.now();
  assert.equal((await failure(open.request({ url: fake.url + '/slow', timeoutMs: 300 }))).kind, 'timeout');
  assert.ok(Date.now() - started < 2000);
  assert.equal((await failure(open.request({ url: fake.url + '/huge' }))).kind, 'too_large');
  assert.equal((await failure(open.request({ url: fake.url + '/declared' }))).kind, 'too_large');
  assert.equal((await failure(open.request({ url: 'http://127.0.0.1:1/' }))).kind, 'unreachable');
  assert.equal((await failure(open.request({ url: 'ftp://example.com/' }))).kind, 'bad_url');
  assert.equal((await failure(open.request({ url: 'not a url' }))).kind, 'bad_url');
});

test('private targets are refused by literal and by name before any byte is sent', async () => {
  const before = fake.seen.length;
  assert.equal((await failure(closed.request({ url: fake.url + '/ok' }))).kind, 'refused');
  assert.equal((await failure(closed.request({ url: `http://localhost:${fake.port}/ok` }))).kind, 'refused');
  assert.equal((await failure(closed.request({ url: `http://[::ffff:127.0.0.1]:${fake.port}/ok` }))).kind, 'refused');
  assert.equal(fake.seen.length, before);
  const allowed = createUpstreamClient({ policy: { allowPrivate: false, allow: ['localhost'] }, timeoutMs: 2000, maxBytes: 1024 });
  try {
    assert.equal((await allowed.request({ url: `http://localhost:${fake.port}/ok` })).status, 200);
  } finally {
    await allowed.close();
  }
});

test('streams yield lines across chunk borders and end cleanly', async () => {
  const s = await open.stream({ url: fake.url + '/stream', idleMs: 1000 });
  const lines: string[] = [];
  for await (const l of s.lines()) lines.push(l);
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
});

test('a proxy carries the request; a proxy on a private address is refused like a target', async () => {
  const proxy = await startConnectProxy();
  try {
    const r = await open.request({ url: fake.url + '/ok', proxy: proxy.url });
    assert.equal(r.status, 200);
    assert.equal(proxy.tunnels.length, 1);
    assert.equal((await failure(closed.request({ url: 'http://8.8.8.8/', proxy: proxy.url }))).kind, 'refused');
    assert.equal((await failure(open.request({ url: fake.url + '/ok', proxy: 'gopher://x' }))).kind, 'bad_url');
  } finally {
    await proxy.close();
  }
});

test('scrubSecrets removes a secret and its encoded forms', () => {
  const key = 'sk-secret+value/1234';
  const text = `bad key ${key} or ${encodeURIComponent(key)} or ${Buffer.from(key).toString('base64')}`;
  const out = scrubSecrets(text, [key, 'ab']);
  assert.ok(!out.includes(key) && !out.includes(encodeURIComponent(key)) && !out.includes(Buffer.from(key).toString('base64')));
  assert.equal(out.split('[redacted]').length, 4);
});

test('a shared byte budget refuses a body past it (over_budget) and is released after every answer', async () => {
  const budget = new ByteBudget(512 * 1024);
  const capped = createUpstreamClient({ policy: { allowPrivate: true, allow: [] }, timeoutMs: 2000, maxBytes: 4 * 1024 * 1024, budget });
  try {
    assert.equal((await failure(capped.request({ url: fake.url + '/huge' }))).kind, 'over_budget');
    assert.equal(budget.used, 0);
    assert.equal(budget.refused, 1);
    assert.deepEqual(JSON.parse((await capped.request({ url: fake.url + '/ok' })).text), { ok: true });
    assert.equal(budget.used, 0);
    assert.ok(budget.peak > 0 && budget.peak <= budget.limit, `peak ${budget.peak}`);
  } finally {
    await capped.close();
  }
});
