import net from 'node:net';

/** The 16 bytes of an IPv6 literal (any textual form, a trailing dotted quad included), or null. */
export function ipv6Bytes(ip: string): number[] | null {
  if (net.isIP(ip) !== 6) return null;
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, quad.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (part: string) => (part ? part.split(':') : []);
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups];
  if (groups.length !== 8) return null;
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 255];
  });
}

const dotted = (b: number[]) => b.join('.');
const startsWith = (bytes: number[], prefix: number[]) => prefix.every((p, i) => bytes[i] === p);
const ZEROS_80 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/**
 * The IPv4 addresses an IPv6 address leads to by a transition form: IPv4-mapped ::ffff:0:0/96, SIIT
 * ::ffff:0:0:0/96, IPv4-compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16 (the relay's IPv4), and Teredo
 * 2001::/32 (its server and its de-obfuscated client). Empty for any other address.
 */
export function embeddedIPv4s(ip: string): string[] {
  const b = ipv6Bytes(ip);
  if (!b) return [];
  const last = b.slice(12, 16);
  if (startsWith(b, [...ZEROS_80, 0xff, 0xff])) return [dotted(last)];
  if (startsWith(b, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return [dotted(last)];
  if (startsWith(b, [...ZEROS_80, 0, 0])) return [dotted(last)];
  if (startsWith(b, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return [dotted(last)];
  if (startsWith(b, [0x20, 0x02])) return [dotted(b.slice(2, 6))];
  if (startsWith(b, [0x20, 0x01, 0, 0])) return [dotted(b.slice(4, 8)), dotted(last.map((x) => x ^ 0xff))];
  return [];
}
