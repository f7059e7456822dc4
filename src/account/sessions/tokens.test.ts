import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { SignJWT, jwtVerify } from 'jose';
import { deriveKey } from '../../kit/crypto/tokens.js';
import { createAccessTokens } from './tokens.js';

const SECRET = 'unit-test-secret-0123456789abcdef';
const key = deriveKey(SECRET, 'access');
const tokens = createAccessTokens(SECRET, 900);
const now = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** A token with any header and payload, HMAC-SHA256-signed with the given key (the real one by default). */
function forge(header: unknown, payload: unknown, with_ = key): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${crypto.createHmac('sha256', with_).update(input).digest('base64url')}`;
}

const good = () => ({
  token_use: 'access',
  sid: 'sid-1',
  uv: 2,
  sv: 3,
  iss: 'new-api',
  aud: 'new-api-dashboard',
  sub: '42',
  iat: now(),
  nbf: now() - 5,
  exp: now() + 600,
});
const HS256 = { alg: 'HS256', typ: 'JWT' };

test('sign then verify round-trips the claims; jose agrees in both directions', async () => {
  const { token, expiresAt } = await tokens.sign({ userId: 42, sid: 'sid-1', uv: 2, sv: 3 });
  assert.deepEqual(await tokens.verify(token), { ok: true, claims: { userId: 42, sid: 'sid-1', uv: 2, sv: 3, exp: expiresAt } });
  const { payload, protectedHeader } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: 'new-api', audience: 'new-api-dashboard' });
  assert.deepEqual(protectedHeader, HS256);
  assert.equal(payload.sub, '42');
  assert.equal(payload.token_use, 'access');
  assert.equal(payload.nbf, (payload.iat as number) - 5);

  const byJose = await new SignJWT({ token_use: 'access', sid: 's', uv: 1, sv: 1 })
    .setProtectedHeader(HS256)
    .setIssuer('new-api')
    .setAudience('new-api-dashboard')
    .setSubject('7')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key);
  const r = await tokens.verify(byJose);
  assert.equal(r.ok && r.claims.userId, 7);
  assert.equal((await tokens.verify(forge(HS256, good()))).ok, true);
});

test('forged tokens are invalid: wrong key, edited payload, edited signature, none and other algorithms', async () => {
  assert.deepEqual(await tokens.verify(forge(HS256, good(), deriveKey('another-secret', 'access'))), { ok: false, reason: 'invalid' });
  assert.deepEqual(await tokens.verify(forge(HS256, good(), deriveKey(SECRET, 'refresh'))), { ok: false, reason: 'invalid' });

  const real = forge(HS256, good());
  const [h, , s] = real.split('.');
  assert.equal((await tokens.verify(`${h}.${b64({ ...good(), sub: '1' })}.${s}`)).ok, false);
  const flipped = s!.slice(0, -2) + (s!.at(-2) === 'A' ? 'B' : 'A') + s!.at(-1);
  assert.equal((await tokens.verify(`${h}.${real.split('.')[1]}.${flipped}`)).ok, false);

  // alg "none" with an empty or any signature, and other algorithms, even when the HMAC itself is right.
  const input = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(good())}`;
  assert.equal((await tokens.verify(`${input}.`)).ok, false);
  assert.equal((await tokens.verify(`${input}.e30`)).ok, false);
  for (const header of [{ alg: 'none' }, { alg: 'HS512', typ: 'JWT' }, { alg: 'hs256' }, { typ: 'JWT' }, { alg: 'HS256', crit: ['b64'], b64: false }, { alg: 'HS256', typ: 'at+jwt' }]) {
    assert.deepEqual(await tokens.verify(forge(header, good())), { ok: false, reason: 'invalid' }, JSON.stringify(header));
  }
  assert.equal((await tokens.verify(forge({ alg: 'HS256' }, good()))).ok, true);

  for (const bad of ['', 'a.b', 'a.b.c.d', `${real} `, real.replace('.', '..'), forge('not json', good()), forge(HS256, 'not json'), forge(HS256, [1])]) {
    assert.deepEqual(await tokens.verify(bad), { ok: false, reason: 'invalid' }, bad);
  }
});

test('claims: wrong audience, issuer, use, subject, missing claims are invalid', async () => {
  const cases: Array<Record<string, unknown>> = [
    { aud: 'other' },
    { aud: ['other'] },
    { iss: 'other' },
    { token_use: 'refresh' },
    { token_use: undefined },
    { sub: '0' },
    { sub: 'x' },
    { sub: '-3' },
    { sid: 5 },
    { sid: undefined },
    { sub: undefined },
    { iss: undefined },
    { aud: undefined },
    { exp: undefined },
    { exp: String(now() + 600) },
    { iat: 'yesterday' },
    { nbf: now() + 60 },
  ];
  for (const change of cases) {
    assert.deepEqual(await tokens.verify(forge(HS256, { ...good(), ...change })), { ok: false, reason: 'invalid' }, JSON.stringify(change));
  }
  assert.equal((await tokens.verify(forge(HS256, { ...good(), aud: ['x', 'new-api-dashboard'] }))).ok, true);
  assert.equal((await tokens.verify(forge(HS256, { ...good(), nbf: now() + 4 }))).ok, true, 'nbf within the 5 s leeway');
});

test('expiry: 5 s leeway, then expired; ignoreExpiry checks as of just before expiry, never skips the rest', async () => {
  assert.equal((await tokens.verify(forge(HS256, { ...good(), exp: now() - 3 }))).ok, true);
  assert.deepEqual(await tokens.verify(forge(HS256, { ...good(), exp: now() - 10 })), { ok: false, reason: 'expired' });
  assert.deepEqual(await tokens.verify(forge(HS256, { ...good(), exp: now() - 10, aud: 'other' })), { ok: false, reason: 'invalid' });

  const old = { ...good(), iat: now() - 3600, nbf: now() - 3605, exp: now() - 1800 };
  assert.deepEqual(await tokens.verify(forge(HS256, old)), { ok: false, reason: 'expired' });
  const r = await tokens.verify(forge(HS256, old), { ignoreExpiry: true });
  assert.equal(r.ok && r.claims.sid, 'sid-1');
  assert.equal((await tokens.verify(forge(HS256, { ...old, aud: 'other' }), { ignoreExpiry: true })).ok, false);
  assert.equal((await tokens.verify(forge(HS256, old, deriveKey('x', 'access')), { ignoreExpiry: true })).ok, false);
  assert.equal((await tokens.verify(forge(HS256, { ...old, nbf: now() - 1000 }), { ignoreExpiry: true })).ok, false, 'not yet valid as of just before its expiry');
});

test('a token verified once is re-checked for expiry on every later use; failures are not remembered', async (t) => {
  const short = createAccessTokens(SECRET, 10);
  const { token } = await short.sign({ userId: 9, sid: 'sid-9', uv: 1, sv: 1 });
  const first = await short.verify(token);
  assert.equal(first.ok, true);
  if (first.ok) first.claims.userId = 1; // a caller changing its copy changes nothing for the next one
  const second = await short.verify(token);
  assert.equal(second.ok && second.claims.userId, 9);

  t.mock.timers.enable({ apis: ['Date'], now: Date.now() + 20_000 });
  assert.deepEqual(await short.verify(token), { ok: false, reason: 'expired' });
  assert.deepEqual(await short.verify(token), { ok: false, reason: 'expired' });
  const late = await short.verify(token, { ignoreExpiry: true });
  assert.equal(late.ok && late.claims.sid, 'sid-9');
  t.mock.timers.reset();

  const forged = forge(HS256, good(), deriveKey('another-secret', 'access'));
  assert.equal((await tokens.verify(forged)).ok, false);
  assert.equal((await tokens.verify(forged)).ok, false);
});
