import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Secret } from 'otpauth';
import { classifyCode, matchTotpStep, newBackupCodes, totpCode, totpUri } from '../../src/account/two-factor/totp.js';

// RFC 6238 appendix B, SHA-1 seed "12345678901234567890"; our codes are the last 6 of the 8 digits.
const seed = Secret.fromLatin1('12345678901234567890').base32;
const vectors: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

test('RFC 6238 SHA-1 test vectors', () => {
  for (const [t, eight] of vectors) assert.equal(totpCode(seed, t * 1000), eight.slice(2), `T=${t}`);
});

test('a code matches its own step and the neighbours, nothing further', () => {
  const t = 1111111109 * 1000;
  const step = Math.floor(t / 30000);
  assert.equal(matchTotpStep(seed, totpCode(seed, t), t), step);
  assert.equal(matchTotpStep(seed, totpCode(seed, t - 30000), t), step - 1);
  assert.equal(matchTotpStep(seed, totpCode(seed, t + 30000), t), step + 1);
  assert.equal(matchTotpStep(seed, totpCode(seed, t - 90000), t), null);
  assert.equal(matchTotpStep(seed, '000000', 59000), null);
});

test('codes are classified before checking', () => {
  assert.deepEqual(classifyCode(' 123 456 '), { kind: 'totp', value: '123456' });
  assert.deepEqual(classifyCode('abcd-ef12'), { kind: 'backup', value: 'ABCDEF12' });
  assert.equal(classifyCode('12345').kind, 'other');
  assert.equal(classifyCode('12345678').kind, 'backup');
});

test('backup codes are XXXX-XXXX and distinct; the otpauth URI names issuer and account', () => {
  const codes = newBackupCodes(50);
  for (const c of codes) assert.match(c, /^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
  assert.equal(new Set(codes).size, codes.length);
  const uri = totpUri(seed, 'New API', 'alice');
  assert.match(uri, /^otpauth:\/\/totp\/New%20API:alice\?/);
  assert.match(uri, /issuer=New%20API/);
  assert.match(uri, /digits=6/);
  assert.match(uri, /period=30/);
});
