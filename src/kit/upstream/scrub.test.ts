import assert from 'node:assert/strict';
import { test } from 'node:test';
import { excerpt, scrubSecrets } from './scrub.js';

const KEY = 'sk-ant-api03-Zx9_Qw7-0123456789abcdefXYZ';

test('scrubSecrets finds a key by its identity: any case, without its prefix, percent- or base64-encoded', () => {
  const spellings = [
    KEY,
    KEY.toUpperCase(),
    KEY.toLowerCase(),
    KEY.replace(/^sk-ant-api03-/, ''),
    KEY.replace(/^sk-/, ''),
    KEY.replace(/-/g, '%2D'),
    [...KEY].map((c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).join(''),
    encodeURIComponent(KEY),
    Buffer.from(KEY).toString('base64'),
    Buffer.from(`user:${KEY}`).toString('base64'),
    Buffer.from(`ab:${KEY}:x`).toString('base64url'),
  ];
  for (const s of spellings) {
    const out = scrubSecrets(`the key "${s}" is wrong`, [KEY]);
    assert.equal(out, 'the key "[redacted]" is wrong', s);
  }
});

test('scrubSecrets leaves other text alone, and short secrets and prefixes unsearched', () => {
  const text = 'sk-ant- keys begin with sk-; Zx9_Qw7 and 0123 are not secrets on their own';
  assert.equal(scrubSecrets(text, [KEY, 'ab']), text);
  assert.equal(excerpt(`bad key ${KEY}\n  again`, [KEY]), 'bad key [redacted] again');
});

test('scrubSecrets stays fast with a thousand keys (a multi-key channel)', () => {
  const keys = Array.from({ length: 1000 }, (_, i) => `sk-${String(i).padStart(4, '0')}abcdefghijklmnopqrstuvwxyz`);
  const text = `error: ${keys[777]!.toUpperCase()} ` + 'lorem ipsum '.repeat(500);
  assert.ok(scrubSecrets(text, keys).startsWith('error: [redacted] lorem'));
  const started = performance.now();
  for (let i = 0; i < 100; i++) scrubSecrets(text, keys);
  assert.ok(performance.now() - started < 1000, 'a scrub with a thousand keys takes well under 10 ms');
});
