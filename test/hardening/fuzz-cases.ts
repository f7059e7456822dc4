import type { RegisteredOperation } from '../../src/contract/registry.js';
import {
  BAD_UTF8, HOSTILE_TEXT, deepJson, deepObjectJson, int, pick, validValue, wellFormed, wrongType, type Rand, type Schema,
} from './fuzz-values.js';

/** One request of the fuzz, before the identity's credentials are added. */
export interface FuzzCase {
  op: string;
  kind: string;
  method: string;
  /** Path with query, already percent-encoded (or deliberately mis-encoded). */
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Parts {
  params: Record<string, string>;
  query: string;
  body: unknown;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** Path values for ids that do not exist or cannot be ids at all (already encoded). */
const UNKNOWN_PATH_VALUES = [
  '999999', '0', '-1', 'abc', '1.5', '99999999999999999999', '1e3', 'x'.repeat(300), '%F0%9F%91%A9%E2%80%8D%F0%9F%92%BB',
  '%E2%80%AEevil', '%00', '%2e%2e', '%ED%A0%80', '%FF', '%', 'a%2Fb', '%20', 'null', 'undefined', '__proto__', 'constructor',
];

/** Query strings that are malformed in themselves (bad percent-encoding, repeats, sizes). */
const BAD_QUERIES = ['%', '%zz=1', 'a=%ED%A0%80', 'a=%FF%FE', 'p=1&p=2&p=x', 'p[]=1&p[x]=2', '=&&=', `q=${'z'.repeat(9000)}`, 'constructor=1&__proto__=1', 'a=%00'];

const INVALID_JSON = ['{', '{"a":', '[1,]', 'nul', '{"a":1}}', "{'a':1}", 'NaN', '{"a":1,}', '\u0000', '{"a":"\\x41"}', '{"a":"\\ud800"', '"\\u12"', '\ufeff{}', '0x10', '[' + ','.repeat(10)];

const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'application/json; charset=latin1',
  'application/jsonx', 'APPLICATION/JSON', 'application/json, text/plain', 'application/xml', '', 'application/json; charset=utf-16',
];

function schemaOf(op: RegisteredOperation, part: 'params' | 'querystring' | 'body'): Schema | undefined {
  return op.impl?.schema?.[part] as Schema | undefined;
}

function encodeQuery(q: Record<string, unknown>): string {
  return Object.entries(q)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? wellFormed(v) : JSON.stringify(v) ?? '')}`)
    .join('&');
}

function encodeValue(v: unknown): string {
  return encodeURIComponent(wellFormed(String(v)));
}

function buildUrl(path: string, params: Record<string, string>, query: string): string {
  const p = path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? '1');
  return query ? `${p}?${query}` : p;
}

function jsonCase(op: RegisteredOperation, kind: string, parts: Parts, body: string | Buffer | undefined, headers = JSON_TYPE): FuzzCase {
  return {
    op: op.spec.id,
    kind,
    method: op.spec.method,
    url: buildUrl(op.spec.path, parts.params, parts.query),
    headers: body === undefined ? {} : headers,
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body),
  };
}

/**
 * Valid path values, query and body for the operation, from its schemas; a path value or top-level body
 * field named in `known` (an existing id, a configured model) takes that value, so handlers get past lookups.
 */
function baseline(rand: Rand, op: RegisteredOperation, known: Known): Parts {
  const params: Record<string, string> = {};
  for (const name of op.spec.path.match(/:(\w+)/g)?.map((m) => m.slice(1)) ?? []) {
    const s = schemaOf(op, 'params')?.properties?.[name];
    params[name] = encodeValue(known[name] ?? validValue(rand, s, name));
  }
  const q = schemaOf(op, 'querystring');
  const bodySchema = schemaOf(op, 'body');
  const body = bodySchema ? validValue(rand, bodySchema) : {};
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const name of Object.keys(bodySchema?.properties ?? {})) if (name in known) (body as Record<string, unknown>)[name] = known[name];
  }
  return { params, query: q ? encodeQuery(validValue(rand, q) as Record<string, unknown>) : '', body };
}

export type Known = Record<string, string | number>;

const bodyText = (b: unknown) => JSON.stringify(b);
const fields = (s: Schema | undefined) => Object.entries(s?.properties ?? {});

/**
 * Every case kind for one operation: the schema-driven ones (wrong type per field, each required field
 * missing, unknown fields, hostile text per string field), the transport ones (huge and deep bodies,
 * invalid JSON and UTF-8, other content types, NUL) and unknown path values, plus `runs` random mixes.
 */
export function casesFor(rand: Rand, op: RegisteredOperation, o: { bodyLimit: number; runs: number; known?: Known }): FuzzCase[] {
  const known = o.known ?? {};
  const base = () => baseline(rand, op, known);
  const out: FuzzCase[] = [];
  const withBody = op.spec.method !== 'GET' && op.spec.method !== 'DELETE';
  const add = (kind: string, parts: Parts, body: unknown = parts.body) => out.push(jsonCase(op, kind, parts, withBody ? bodyText(body) : undefined));
  const bodySchema = schemaOf(op, 'body');
  const querySchema = schemaOf(op, 'querystring');

  const valid = base();
  out.push(jsonCase(op, 'valid', valid, withBody ? bodyText(valid.body) : undefined));
  const isObjectBody = valid.body !== null && typeof valid.body === 'object' && !Array.isArray(valid.body);

  if (withBody) {
    for (const [name, s] of fields(bodySchema)) {
      const p = base();
      add(`wrong-type:body.${name}`, p, { ...(p.body as object), [name]: wrongType(rand, s) });
      for (const text of [pick(rand, HOSTILE_TEXT), pick(rand, HOSTILE_TEXT)]) add(`hostile:body.${name}`, p, { ...(p.body as object), [name]: text });
      // Invalid UTF-8 inside the string value, spliced in as raw bytes.
      const [before, after] = bodyText({ ...(p.body as object), [name]: 'SPLIT' }).split('SPLIT');
      out.push(jsonCase(op, `bad-utf8:body.${name}`, p, Buffer.concat([Buffer.from(before!), pick(rand, BAD_UTF8), Buffer.from(after!)])));
      // Deep values reach validation and the handler; with a NUL at the bottom the parser's check walks them.
      for (const [kind, inner] of [['deep', '1'], ['deep-nul', '"\\u0000"']]) {
        const text = bodyText({ ...(p.body as object), [name]: 'DEEP' }).replace('"DEEP"', deepObjectJson(20_000, inner));
        out.push(jsonCase(op, `${kind}:body.${name}`, p, text));
      }
    }
    for (const name of bodySchema?.required ?? []) {
      const p = base();
      const { [name]: _, ...rest } = p.body as Record<string, unknown>;
      add(`missing:body.${name}`, p, rest);
    }
    if (isObjectBody) add('extra-field', valid, { ...(valid.body as object), unknown_field_zz: 1, ['x'.repeat(200)]: [1] });
    add('nul-in-key', valid, { ...(valid.body as object), 'a\u0000': 1 });
    for (const whole of [[], 'text', 42, null, true, [valid.body]]) add('wrong-type:body', valid, whole);
    out.push(jsonCase(op, 'huge-body', valid, `{"a":"${'x'.repeat(o.bodyLimit + 4096)}"}`));
    out.push(jsonCase(op, 'deep-array', valid, deepJson(60_000)));
    out.push(jsonCase(op, 'deep-array-nul', valid, deepJson(60_000, '"\\u0000"')));
    out.push(jsonCase(op, 'deep-object', valid, deepObjectJson(30_000)));
    for (const text of INVALID_JSON) out.push(jsonCase(op, 'invalid-json', valid, text));
    for (const type of CONTENT_TYPES) out.push(jsonCase(op, `content-type:${type}`, valid, bodyText(valid.body), type ? { 'content-type': type } : ({} as typeof JSON_TYPE)));
    out.push(jsonCase(op, 'empty-body', valid, ''));
  } else {
    // A body where none is expected.
    out.push(jsonCase(op, 'unexpected-body', valid, '{"a":1}'));
    out.push(jsonCase(op, 'unexpected-invalid-body', valid, '{'));
  }

  for (const [name, s] of fields(querySchema)) {
    const p = base();
    const q = new URLSearchParams(p.query);
    q.set(name, String(wrongType(rand, s)));
    add(`wrong-type:query.${name}`, { ...p, query: q.toString() });
    const hostile = new URLSearchParams(p.query);
    hostile.set(name, wellFormed(pick(rand, HOSTILE_TEXT)));
    add(`hostile:query.${name}`, { ...p, query: hostile.toString() });
  }
  for (const name of querySchema?.required ?? []) {
    const p = base();
    const q = new URLSearchParams(p.query);
    q.delete(name);
    add(`missing:query.${name}`, { ...p, query: q.toString() });
  }
  for (const bad of BAD_QUERIES) add('bad-query', { ...valid, query: valid.query ? `${valid.query}&${bad}` : bad });

  for (const name of Object.keys(valid.params)) {
    for (const value of UNKNOWN_PATH_VALUES) add(`path:${name}`, { ...valid, params: { ...valid.params, [name]: value } });
  }

  // Random mixes: several mutations on one baseline.
  for (let i = 0; i < o.runs; i++) {
    const p = base();
    const body = isObjectBody ? { ...(p.body as Record<string, unknown>) } : p.body;
    const names = fields(bodySchema);
    for (let m = int(rand, 1, 3); m > 0 && names.length && typeof body === 'object' && body; m--) {
      const [name, s] = pick(rand, names);
      (body as Record<string, unknown>)[name] = pick(rand, [wrongType(rand, s), pick(rand, HOSTILE_TEXT), validValue(rand, s, name)]);
    }
    const params = Object.keys(p.params).length && rand() < 0.3 ? { ...p.params, [pick(rand, Object.keys(p.params))]: pick(rand, UNKNOWN_PATH_VALUES) } : p.params;
    add('random', { ...p, params }, body);
  }
  return out;
}
