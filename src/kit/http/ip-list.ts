import net from 'node:net';

/**
 * A list of client addresses: IPv4 or IPv6 addresses and CIDRs, written one per line or separated by commas
 * (spaces ignored). A client matches when its address is one of them or in one of the ranges; an IPv4
 * client seen through a dual-stack socket (::ffff:a.b.c.d) is matched as the IPv4 address.
 */
export interface IpList {
  /** The entries as written (trimmed). */
  entries: string[];
  matches(ip: string): boolean;
}

/** The entries of a written list (empty entries dropped). */
export function ipListEntries(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((e) => e.replace(/\s+/g, ''))
    .filter((e) => e !== '');
}

/** The first entry that is neither an IP address nor a CIDR, or null. */
export function invalidIpEntry(entries: string[]): string | null {
  for (const e of entries) {
    const [addr, bits, extra] = e.split('/');
    const family = net.isIP(addr ?? '');
    if (family === 0 || extra !== undefined) return e;
    if (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 6 ? 128 : 32))) return e;
  }
  return null;
}

/** An IPv4 address behind its IPv4-mapped IPv6 form; any other address unchanged. */
export function plainAddress(ip: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return m && net.isIPv4(m[1]!) ? m[1]! : ip;
}

/** Parses a list (see invalidIpEntry for what is refused: such entries match nothing). */
export function parseIpList(text: string): IpList {
  const entries = ipListEntries(text);
  const list = new net.BlockList();
  for (const e of entries) {
    if (invalidIpEntry([e]) !== null) continue;
    const [addr, bits] = e.split('/') as [string, string | undefined];
    const a = plainAddress(addr);
    const family = net.isIP(a) === 6 ? 'ipv6' : 'ipv4';
    // A mapped range (::ffff:a.b.c.d/n) is the IPv4 range of its last 32 bits.
    const prefix = bits === undefined ? undefined : a !== addr ? Math.max(0, Number(bits) - 96) : Number(bits);
    if (prefix === undefined) list.addAddress(a, family);
    else list.addSubnet(a, prefix, family);
  }
  return {
    entries,
    matches(ip: string) {
      const a = plainAddress(ip);
      const family = net.isIP(a);
      if (family === 0) return false;
      return list.check(a, family === 6 ? 'ipv6' : 'ipv4');
    },
  };
}
