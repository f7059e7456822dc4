import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressRefusedError, checkAddress, checkHostNow, guardedLookup, invalidAllowEntry, isPublicAddress } from './address-policy.js';
import { embeddedIPv4s } from './embedded-ipv4.js';

const closed = { allowPrivate: false, allow: [] };

test('private, loopback, link-local, metadata, shared and reserved addresses are not public', () => {
  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '::ffff:10.0.0.1']) {
    assert.equal(isPublicAddress(ip), false, ip);
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPublicAddress(ip), true, ip);
  assert.equal(isPublicAddress('not-an-ip'), false);
});

test('IPv6 forms carrying a private IPv4 address are refused: compatible, mapped, SIIT, NAT64, 6to4, Teredo', async () => {
  const refused = [
    '::127.0.0.1', '::7f00:1', '::10.0.0.1', '::8.8.8.8', '0:0:0:0:0:ffff:7f00:1', '::ffff:0:127.0.0.1', '64:ff9b::127.0.0.1',
    '64:ff9b::a00:1', '64:ff9b:1::8.8.8.8', '2002:7f00:1::1', '2002:a9fe:a9fe::', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:7f00:1::',
  ];
  for (const ip of refused) {
    assert.equal(isPublicAddress(ip), false, ip);
    assert.throws(() => checkAddress(closed, ip, ip), AddressRefusedError, ip);
  }
  for (const ip of ['64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:808:808::f7f7:f7f7']) assert.equal(isPublicAddress(ip), true, ip);
  await assert.rejects(checkHostNow(closed, new URL('http://[::127.0.0.1]/').hostname), AddressRefusedError);
  assert.deepEqual(embeddedIPv4s('2001:0:4136:e378:8000:63bf:3fff:fdd2'), ['65.54.227.120', '192.0.2.45']);
});

test('the allow-list admits hosts, suffixes, addresses and CIDRs; allowPrivate admits all', () => {
  assert.throws(() => checkAddress(closed, 'internal', '10.0.0.5'), AddressRefusedError);
  checkAddress({ allowPrivate: false, allow: ['internal'] }, 'INTERNAL.', '10.0.0.5');
  checkAddress({ allowPrivate: false, allow: ['*.corp.example'] }, 'a.corp.example', '10.0.0.5');
  assert.throws(() => checkAddress({ allowPrivate: false, allow: ['*.corp.example'] }, 'corp.example.evil', '10.0.0.5'), AddressRefusedError);
  checkAddress({ allowPrivate: false, allow: ['10.0.0.0/8'] }, 'x', '10.9.9.9');
  assert.throws(() => checkAddress({ allowPrivate: false, allow: ['10.0.0.0/8'] }, 'x', '192.168.0.1'), AddressRefusedError);
  checkAddress({ allowPrivate: false, allow: ['127.0.0.1'] }, 'x', '127.0.0.1');
  checkAddress({ allowPrivate: true, allow: [] }, 'x', '169.254.169.254');
  assert.equal(invalidAllowEntry(['a.example', '*.b.example', '10.0.0.0/8', '::1', 'fd00::/8']), null);
  assert.equal(invalidAllowEntry(['ok', 'bad host']), 'bad host');
  assert.equal(invalidAllowEntry(['10.0.0.0/33']), '10.0.0.0/33');
});

test('a name resolving to loopback is refused at lookup time, and admitted when allowed', async () => {
  const lookup = guardedLookup(closed);
  const err = await new Promise<unknown>((resolve) => lookup('localhost', {}, (e) => resolve(e)));
  assert.ok(err instanceof AddressRefusedError);
  const open = guardedLookup({ allowPrivate: false, allow: ['localhost'] });
  const addr = await new Promise<unknown>((resolve) => open('localhost', { all: true }, (_e, a) => resolve(a)));
  assert.ok(Array.isArray(addr) && addr.length > 0);
  await assert.rejects(checkHostNow(closed, 'localhost'), AddressRefusedError);
  await assert.rejects(checkHostNow(closed, '[::1]'), AddressRefusedError);
  await checkHostNow(closed, '8.8.8.8');
});
