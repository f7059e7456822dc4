import assert from 'node:assert/strict';
import { test } from 'node:test';
import { invalidIpEntry, ipListEntries, parseIpList } from './ip-list.js';

test('entries are split on newlines and commas, spaces ignored', () => {
  assert.deepEqual(ipListEntries(' 10.0.0.1 ,\n\n192.168.0.0/16\r\n 2001:db8::/32 ,'), ['10.0.0.1', '192.168.0.0/16', '2001:db8::/32']);
  assert.deepEqual(ipListEntries(''), []);
});

test('IPv4, IPv6 and CIDRs are valid; names, bad prefixes and junk are not', () => {
  assert.equal(invalidIpEntry(['1.2.3.4', '10.0.0.0/8', '::1', '2001:db8::/32', '0.0.0.0/0', '::/0', '::ffff:10.0.0.0/104']), null);
  for (const bad of ['example.com', '10.0.0.0/33', '::/129', '1.2.3.4/', '1.2.3.4/8/8', '1.2.3', '1.2.3.4/-1', '*']) assert.equal(invalidIpEntry([bad]), bad, bad);
});

test('an address matches itself and the ranges holding it, in either family', () => {
  const list = parseIpList('203.0.113.7\n10.0.0.0/8, 2001:db8:1::/48\n::1');
  for (const ip of ['203.0.113.7', '10.200.3.4', '2001:db8:1:ffff::9', '::1', '::ffff:10.1.1.1', '::FFFF:203.0.113.7']) assert.equal(list.matches(ip), true, ip);
  for (const ip of ['203.0.113.8', '11.0.0.1', '2001:db8:2::1', '::2', '', 'nonsense', '::ffff:11.0.0.1']) assert.equal(list.matches(ip), false, ip);
});

test('an IPv4-mapped entry matches the IPv4 client; an empty list matches nothing', () => {
  assert.equal(parseIpList('::ffff:127.0.0.1').matches('127.0.0.1'), true);
  assert.equal(parseIpList('::ffff:10.0.0.0/104').matches('10.9.9.9'), true);
  assert.equal(parseIpList('::ffff:10.0.0.0/104').matches('11.9.9.9'), false);
  assert.equal(parseIpList('').matches('127.0.0.1'), false);
});
