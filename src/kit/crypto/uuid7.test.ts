import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uuidV7 } from './uuid7.js';

test('uuidV7: RFC 9562 version 7 and variant, the time in its first 48 bits, unique, ordered by time', () => {
  const now = Date.UTC(2026, 10, 28, 23, 40, 0, 123);
  const id = uuidV7(now);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), now);
  const many = Array.from({ length: 2000 }, (_, i) => uuidV7(now + Math.floor(i / 10)));
  assert.equal(new Set(many).size, many.length, 'no repeat, across refills of the random pool');
  const byMs = many.filter((_, i) => i % 10 === 0);
  assert.deepEqual([...byMs].sort(), byMs, 'later milliseconds sort later');
  assert.notEqual(uuidV7(now).slice(14), uuidV7(now).slice(14), 'the rest is random');
});
