import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from './canonical.js';

test('canonicalJson: key order and whitespace do not matter, values and array order do', () => {
  const a = JSON.parse('{"b": 1, "a": {"y": [1, {"q": 2, "p": "x"}], "x": null}}');
  const b = JSON.parse('{"a":{"x":null,"y":[1,{"p":"x","q":2}]},"b":1}');
  assert.equal(canonicalJson(a), canonicalJson(b));
  assert.equal(canonicalJson(a), '{"a":{"x":null,"y":[1,{"p":"x","q":2}]},"b":1}');
  assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }));
  assert.notEqual(canonicalJson({ a: '1' }), canonicalJson({ a: 1 }));
  assert.equal(canonicalJson(undefined), 'null');
  assert.equal(canonicalJson('a"\u0001'), JSON.stringify('a"\u0001'));
});
