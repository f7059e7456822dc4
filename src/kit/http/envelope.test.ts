import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonWithRaw, ok, RawJson } from './envelope.js';

test('jsonWithRaw without fragments equals JSON.stringify', () => {
  const values = [
    ok({ items: [1, 'x', null, { a: undefined, b: [undefined, () => 1] }], total: 2.5, s: 'é"\\\n\u2028', n: -0 }),
    ok(),
    [],
    {},
    'text',
    null,
    { nested: { deep: [{ k: true }] }, skipped: undefined },
  ];
  for (const v of values) assert.equal(jsonWithRaw(v), JSON.stringify(v));
});

test('jsonWithRaw splices fragments unchanged at any depth', () => {
  const items = [{ id: 1, name: 'ü' }, { id: 2, name: null }];
  const text = jsonWithRaw(ok({ items: new RawJson(JSON.stringify(items)), total: 2, inner: [new RawJson('{"a":1.0}')] }));
  assert.equal(text, '{"success":true,"message":"","data":{"items":[{"id":1,"name":"ü"},{"id":2,"name":null}],"total":2,"inner":[{"a":1.0}]}}');
  assert.deepEqual(JSON.parse(text).data.items, items);
});
