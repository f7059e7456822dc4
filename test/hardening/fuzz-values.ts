/**
 * Values for the schema-driven fuzz: a seeded PRNG, values that fit a JSON schema (TypeBox output) and
 * hostile values (wrong types, odd text). Deterministic for a given seed, so a failure can be replayed.
 */

export type Rand = () => number;

/** mulberry32: a small seeded PRNG with good enough spread for picking cases. */
export function seeded(seed: number): Rand {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(rand: Rand, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
export const int = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
}

/**
 * Field names whose values count as secrets: every string the fuzz sends in them carries SECRET_MARK, and
 * no response or log line may repeat it.
 */
export const SENSITIVE_FIELD = /pass|secret|token|key|code|credential|proof/i;
export const SECRET_MARK = 'Fz9SeCrEt';

/** Text that has broken parsers, databases and log formats before. */
export const HOSTILE_TEXT: readonly string[] = [
  '\u202Eevil\u202C', // right-to-left override
  'مرحبا بالعالم', // Arabic (RTL)
  'שלום', // Hebrew (RTL)
  '👩‍💻🔥🏳️‍🌈', // emoji with joiners
  'e\u0301\u0301\u0301', // stacked combining marks
  '\u200B\uFEFF', // zero-width characters only
  '\ud800', // lone high surrogate (JSON.stringify escapes it as \ud800)
  '\udfff', // lone low surrogate
  'a\u0000b', // NUL
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '../../../../etc/passwd',
  '%00%2e%2e%2f',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '\r\nSet-Cookie: x=1',
  ' ',
  '',
  '-1',
  '1e309',
  'x'.repeat(70_000),
];

/** Raw byte sequences that are not valid UTF-8 (a lone surrogate encoded as CESU-8, overlong, stray bytes). */
export const BAD_UTF8: readonly Buffer[] = [
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
];

const SAMPLE_STRINGS = ['a', 'abc', 'gpt-test', 'default', 'model', '1', '1.0.0', '0a1b2c3d', 'abcdef12', 'x_1', 'ok', 'true'];

function typeOf(s: Schema): string | undefined {
  return Array.isArray(s.type) ? s.type[0] : s.type;
}

function stringFor(rand: Rand, s: Schema, name: string): string {
  const max = s.maxLength ?? 64;
  const min = s.minLength ?? 0;
  const candidates = [...SAMPLE_STRINGS, 'a'.repeat(Math.max(min, 1)), int(rand, 0, 1e9).toString(36)];
  if (s.pattern) {
    const re = new RegExp(s.pattern);
    const fits = candidates.filter((c) => re.test(c) && c.length <= max && c.length >= min);
    if (fits.length) return pick(rand, fits);
  }
  if (SENSITIVE_FIELD.test(name) && max >= SECRET_MARK.length + 4) return `${SECRET_MARK}-${int(rand, 1000, 9999)}`.slice(0, max);
  const text = pick(rand, candidates);
  return text.length < min ? text.padEnd(min, 'x') : text.slice(0, max);
}

/** A value that fits the schema (as far as a pattern allows): the baseline each mutation starts from. */
export function validValue(rand: Rand, s: Schema | undefined, name = '', depth = 0): unknown {
  if (!s) return null;
  if (s.const !== undefined) return s.const;
  if (s.enum) return pick(rand, s.enum);
  if (s.anyOf) return validValue(rand, pick(rand, s.anyOf), name, depth);
  switch (typeOf(s)) {
    case 'string':
      return stringFor(rand, s, name);
    case 'integer':
    case 'number': {
      const lo = Math.max(s.minimum ?? 0, -1000);
      const hi = Math.min(s.maximum ?? 1000, lo + 1000);
      return pick(rand, [lo, hi, int(rand, lo, hi), Math.min(hi, Math.max(lo, 1))]);
    }
    case 'boolean':
      return rand() < 0.5;
    case 'null':
      return null;
    case 'array': {
      const n = Math.min(s.maxItems ?? 3, Math.max(s.minItems ?? 0, int(rand, 0, 3)));
      return Array.from({ length: n }, () => validValue(rand, s.items, name, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(s.required ?? []);
      for (const [k, sub] of Object.entries(s.properties ?? {})) {
        if (required.has(k) || rand() < 0.6) out[k] = validValue(rand, sub, k, depth + 1);
      }
      return out;
    }
    default:
      // No type: any JSON value.
      return depth > 2 ? 1 : pick(rand, [{}, { channel_id: 1 }, [], 'x', 1, null]);
  }
}

/** A value of another JSON type than the schema asks for. */
export function wrongType(rand: Rand, s: Schema | undefined): unknown {
  const t = s && !s.anyOf ? typeOf(s) : undefined;
  const all: [string, unknown][] = [
    ['string', pick(rand, ['x', '12', 'true', 'null', ''])],
    ['integer', pick(rand, [-1, 0, 1.5, 2 ** 53 + 2, -(2 ** 63), 1e308])],
    ['boolean', pick(rand, [true, false])],
    ['null', null],
    ['array', pick(rand, [[], [1, 'a'], [[[]]]])],
    ['object', pick(rand, [{}, { a: 1 }, { __proto__: { admin: true } }, JSON.parse('{"__proto__":{"polluted":1},"constructor":{"prototype":{"p":1}}}')])],
  ];
  const others = all.filter(([k]) => k !== t && !(t === 'number' && k === 'integer'));
  return pick(rand, others)[1];
}

/** Nested arrays `depth` deep around `inner`, as JSON text (built without recursion). */
export function deepJson(depth: number, inner = '1'): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

/** Nested objects {"a":{"a":…}} `depth` deep, as JSON text. */
export function deepObjectJson(depth: number, inner = '1'): string {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

/** The text with lone surrogates replaced by U+FFFD, so encodeURIComponent accepts it. */
export function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
