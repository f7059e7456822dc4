import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkJsonTextDepth, checkJsonValueDepth, JsonTooDeep } from './limits.js';

test('JSON depth: text and value agree; brackets inside strings do not count; 20 000 levels refused without overflowing', () => {
  const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
  for (const [text, ok] of [
    [nested(8), true],
    [nested(9), false],
    ['{"a":{"b":{"c":[1,2,{"d":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]}}}', true],
    ['{"a":"\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', true],
    ['{"a":' + nested(8) + '}', false],
    [nested(20_000), false],
  ] as const) {
    const byText = (() => { try { checkJsonTextDepth(text, 8); return true; } catch (e) { assert.ok(e instanceof JsonTooDeep); return false; } })();
    const byValue = (() => { try { checkJsonValueDepth(JSON.parse(text), 8); return true; } catch (e) { assert.ok(e instanceof JsonTooDeep); return false; } })();
    assert.equal(byText, ok, text.slice(0, 40));
    assert.equal(byValue, ok, text.slice(0, 40));
  }
});
