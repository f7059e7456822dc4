import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import { CancelSource } from './cancel-signal.js';

test('CancelSource: each listener runs once on abort, with an AbortError as the reason; removed and late listeners never run', () => {
  const s = new CancelSource();
  const ran: string[] = [];
  const a = () => ran.push('a');
  const b = () => ran.push('b');
  s.addEventListener('abort', a);
  s.addEventListener('abort', a);
  s.addEventListener('abort', b);
  s.removeEventListener('abort', b);
  assert.equal(s.aborted, false);
  s.abort();
  s.abort();
  s.addEventListener('abort', () => ran.push('late'));
  assert.deepEqual(ran, ['a']);
  assert.equal(s.aborted, true);
  assert.ok(s.reason instanceof DOMException);
  assert.equal((s.reason as DOMException).name, 'AbortError');
});

test('CancelSource: undici takes it as a request signal and ends the request when it aborts', async () => {
  const server = http.createServer(() => {
    // never answers
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const s = new CancelSource();
  try {
    const pending = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { signal: s });
    setTimeout(() => s.abort(), 20);
    await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
