import dns from 'node:dns';
import net from 'node:net';
import { embeddedIPv4s } from './embedded-ipv4.js';

/**
 * Which addresses an outgoing request may reach. By default only public unicast addresses: private,
 * loopback, link-local (cloud metadata), shared, multicast and reserved ranges are refused, in IPv4 and in
 * every IPv6 form that carries an IPv4 address, unless `allowPrivate` is set or the host or address is on
 * `allow` (host names, `*.suffix`, IPs or CIDRs).
 */
export interface AddressPolicy {
  allowPrivate: boolean;
  allow: string[];
}

/** A refused address: the message names the host, never a path, query or credential. */
export class AddressRefusedError extends Error {
  constructor(readonly host: string) {
    super(`address of ${host} is not allowed (private, loopback, link-local or reserved)`);
    this.name = 'AddressRefusedError';
  }
}

const blocked = new net.BlockList();
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net4, prefix, 'ipv4');
}
for (const [net6, prefix] of [
  // ::/96 holds the unspecified and loopback addresses and the deprecated IPv4-compatible form (::a.b.c.d);
  // 64:ff9b:1::/48 is local-use NAT64 (RFC 8215).
  ['::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) {
  blocked.addSubnet(net6, prefix, 'ipv6');
}

/**
 * Whether an IP literal is a public unicast address. An IPv6 address that leads to an IPv4 one (mapped,
 * NAT64, 6to4, Teredo: see embeddedIPv4s) is public only when each IPv4 address it carries is.
 */
export function isPublicAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 4) return !blocked.check(ip, 'ipv4');
  if (family === 6) return !blocked.check(ip, 'ipv6') && embeddedIPv4s(ip).every(isPublicAddress);
  return false;
}

function hostAllowed(policy: AddressPolicy, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return policy.allow.some((entry) => {
    const e = entry.toLowerCase();
    if (e.startsWith('*.')) return h.endsWith(e.slice(1));
    return !e.includes('/') && e === h;
  });
}

function addressAllowed(policy: AddressPolicy, ip: string): boolean {
  if (policy.allowPrivate || isPublicAddress(ip)) return true;
  const family = net.isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  return policy.allow.some((entry) => {
    const [addr, bits] = entry.split('/');
    if (!addr || net.isIP(addr) === 0) return false;
    if (bits === undefined) return addr === ip;
    const list = new net.BlockList();
    const f = net.isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(addr, Number(bits), f);
    return list.check(ip, family);
  });
}

/** Checks one resolved (or literal) address of `host`; throws AddressRefusedError when refused. */
export function checkAddress(policy: AddressPolicy, host: string, ip: string): void {
  if (hostAllowed(policy, host)) return;
  if (!addressAllowed(policy, ip)) throw new AddressRefusedError(host);
}

/** Validates the entries of an allow-list; returns the first bad one, or null. */
export function invalidAllowEntry(entries: string[]): string | null {
  for (const e of entries) {
    const [addr, bits] = e.split('/');
    if (bits !== undefined) {
      const family = net.isIP(addr ?? '');
      const max = family === 6 ? 128 : 32;
      if (family === 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > max) return e;
    } else if (net.isIP(e) === 0 && !/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(e)) {
      return e;
    }
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets that refuses disallowed addresses after resolution, at connect time: the address
 * checked is the address connected to, so a name that resolves to a public address when validated and to
 * a private one when connecting (DNS rebinding) is still refused. Any refused address fails the lookup.
 */
export function guardedLookup(policy: AddressPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      try {
        for (const a of addresses) checkAddress(policy, hostname, a.address);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves `host` now and checks every address (for targets reached through a proxy, which resolves them itself). */
export async function checkHostNow(policy: AddressPolicy, host: string): Promise<void> {
  const bare = host.replace(/^\[|\]$/g, '');
  if (net.isIP(bare)) return checkAddress(policy, bare, bare);
  if (hostAllowed(policy, bare)) return;
  const addresses = await dns.promises.lookup(bare, { all: true });
  for (const a of addresses) checkAddress(policy, bare, a.address);
}
