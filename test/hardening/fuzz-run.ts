import assert from 'node:assert/strict';
import { request } from 'undici';
import { errorCatalog } from '../../src/contract/errors/index.js';
import type { RegisteredOperation } from '../../src/contract/registry.js';
import { casesFor, type FuzzCase, type Known } from './fuzz-cases.js';
import { SECRET_MARK, seeded } from './fuzz-values.js';
import { variants, type Variant } from '../helpers/services.js';

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261125);
/** Random mixes per operation and identity, on top of the fixed case kinds. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 8);

/** Who sends the request: the credentials are read at send time, so a renewed session is used at once. */
export interface Identity {
  name: string;
  headers: () => Record<string, string>;
}

export interface FuzzTarget {
  service: string;
  baseUrl: string;
  ops: RegisteredOperation[];
  identities: Identity[];
  bodyLimit: number;
  /** The error body shape, for every operation or per operation id. */
  errorShape: ErrorShape | ((op: string, path: string) => ErrorShape);
  /** Error codes allowed with a status >= 500, each with the reason the spec gives. */
  allowed5xx: Record<string, string>;
  /** Codes whose status is not the catalog's but another system's (an upstream's, kept), with the reason. */
  passedStatus?: Record<string, string>;
  /** Secrets the server holds or the test sent as credentials: none may appear in a response or a log line. */
  secrets: () => string[];
  logText: () => string;
  /** Values for path parameters and top-level body fields of that name (existing ids, a configured model). */
  known?: Known;
  /** Extra headers for an operation (for example an idempotency key). */
  headersFor?: (c: FuzzCase) => Record<string, string>;
  /** Runs after each operation's cases for an identity (for example to log in again if a case logged out). */
  afterOperation?: (op: RegisteredOperation, identity: Identity) => Promise<void>;
}

/**
 * 'envelope': {success:false, code, message}; 'openai': {error:{code, type, message, param}, requestId};
 * 'anthropic': {type:'error', error:{type, message}} and 'gemini': {error:{code: the status, message, status}},
 * both with the catalog code in the x-relay-error-code header.
 */
export type ErrorShape = 'envelope' | 'openai' | 'anthropic' | 'gemini';

/** The shape by the operation, and by the path the server sees (a fuzzed path parameter such as `..` can lead elsewhere). */
const shapeOf = (t: FuzzTarget, c: FuzzCase): ErrorShape => (typeof t.errorShape === 'function' ? t.errorShape(c.op, new URL(c.url, 'http://x').pathname) : t.errorShape);

/** The catalog code of an error answer in its shape. */
function codeOf(shape: ErrorShape, json: any, headers: Record<string, unknown>): unknown {
  if (shape === 'envelope') return json?.code;
  if (shape === 'openai') return json?.error?.code;
  // The vendors' shapes have no code field: the relay sends it in x-relay-error-code, the edge in x-error-code.
  return headers['x-relay-error-code'] ?? headers['x-error-code'];
}

/** What is wrong with the error body's shape, or null. */
function shapeFault(shape: ErrorShape, status: number, json: any, text: string): string | null {
  if (shape === 'envelope' && (json?.success !== false || typeof json.message !== 'string')) return `not the error envelope: ${text.slice(0, 200)}`;
  if (shape === 'openai' && (typeof json?.error?.message !== 'string' || typeof json.error.type !== 'string' || !('param' in json.error) || typeof json.requestId !== 'string')) {
    return `not the OpenAI-style error body: ${text.slice(0, 200)}`;
  }
  if (shape === 'anthropic' && (json?.type !== 'error' || typeof json.error?.type !== 'string' || typeof json.error.message !== 'string')) return `not Anthropic's error body: ${text.slice(0, 200)}`;
  if (shape === 'gemini' && (json?.error?.code !== status || typeof json.error.message !== 'string' || typeof json.error.status !== 'string')) return `not Google's error body: ${text.slice(0, 200)}`;
  return null;
}

export interface FuzzResult {
  requests: number;
  byStatus: Record<string, number>;
  allowed5xx: Record<string, number>;
  failures: string[];
  ms: number;
}

const STACK_FRAME = /\n\s+at |\bat [^\s(]+ \([^)]*:\d+:\d+\)/;
const FILE_PATH = /\/(work|home|usr|tmp|src|node_modules)\/|file:\/\/|\.(ts|js|mjs):\d+/;

/** What is wrong with one response, or null. */
function judge(t: FuzzTarget, shape: ErrorShape, r: { status: number; text: string; headers: Record<string, unknown> }, secrets: string[]): string | null {
  const { status, text } = r;
  if (STACK_FRAME.test(text)) return 'stack trace in the body';
  // Only error bodies: G77 (root) reports the plugin directories on purpose.
  if (status >= 400 && FILE_PATH.test(text)) return 'file path in an error body';
  if (text.includes(SECRET_MARK)) return 'echoes a secret-field value it was sent';
  const leaked = secrets.find((s) => text.includes(s));
  if (leaked) return `leaks a secret (${leaked.slice(0, 6)}…)`;
  if (status < 400) return null;
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    return `error body is not JSON: ${text.slice(0, 120)}`;
  }
  const fault = shapeFault(shape, status, json, text);
  if (fault) return fault;
  const code = codeOf(shape, json, r.headers) as string;
  const def = errorCatalog[code];
  if (!def) return `code ${code} is not in the error catalog`;
  if (def.status !== status && !(code in (t.passedStatus ?? {}))) return `code ${code} has catalog status ${def.status}, answered ${status}`;
  if (status >= 500 && !(code in t.allowed5xx)) return `${status} ${code}: ${text.slice(0, 200)}`;
  return null;
}

async function send(t: FuzzTarget, c: FuzzCase, identity: Identity): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const headers = { ...c.headers, ...identity.headers(), ...t.headersFor?.(c) };
  const res = await request(t.baseUrl + c.url, { method: c.method as never, headers, body: c.body, headersTimeout: 60_000, bodyTimeout: 60_000 });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

/** Sends every case of every operation as every identity, a few at a time, and judges each answer. */
export async function fuzz(t: FuzzTarget): Promise<FuzzResult> {
  const started = Date.now();
  const rand = seeded(FUZZ_SEED);
  const result: FuzzResult = { requests: 0, byStatus: {}, allowed5xx: {}, failures: [], ms: 0 };
  const fail = (c: FuzzCase, who: string, why: string) => {
    if (result.failures.length < 200) result.failures.push(`${c.op} ${c.kind} as ${who}: ${c.method} ${c.url.slice(0, 120)} → ${why}`);
  };
  for (const op of t.ops) {
    const cases = casesFor(rand, op, { bodyLimit: t.bodyLimit, runs: FUZZ_RUNS, known: t.known });
    for (const identity of t.identities) {
      const queue = [...cases];
      const worker = async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          result.requests++;
          try {
            const r = await send(t, c, identity);
            const bucket = `${Math.floor(r.status / 100)}xx`;
            result.byStatus[bucket] = (result.byStatus[bucket] ?? 0) + 1;
            const shape = shapeOf(t, c);
            const why = judge(t, shape, r, t.secrets());
            if (why) fail(c, identity.name, why);
            else if (r.status >= 500) {
              const code = codeOf(shape, JSON.parse(r.text), r.headers);
              const key = `${code} (${c.op})`;
              result.allowed5xx[key] = (result.allowed5xx[key] ?? 0) + 1;
            }
          } catch (e) {
            // A server may close the connection after refusing an oversized body before reading it.
            if (c.kind !== 'huge-body') fail(c, identity.name, `request failed: ${(e as Error).message}`);
            else result.byStatus.closed = (result.byStatus.closed ?? 0) + 1;
          }
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      await t.afterOperation?.(op, identity);
    }
  }
  const log = t.logText();
  if (log.includes(SECRET_MARK)) result.failures.push('a log line holds a secret-field value the fuzz sent');
  for (const s of t.secrets()) if (log.includes(s)) result.failures.push(`a log line holds a secret (${s.slice(0, 6)}…)`);
  for (const line of log.split('\n')) {
    if (line.includes("\"unhandled error\"")) result.failures.push(`unhandled error logged: ${line.slice(0, 1500)}`);
  }
  result.ms = Date.now() - started;
  return result;
}

/** One line for the test output and docs/security.md. */
export function summary(t: FuzzTarget, r: FuzzResult): string {
  const statuses = Object.entries(r.byStatus).sort().map(([k, v]) => `${k} ${v}`).join(', ');
  // "code (op)" keys grouped by code: "api_not_implemented 485 (EP01 EP02 …)".
  const byCode = new Map<string, { n: number; ops: string[] }>();
  for (const [key, n] of Object.entries(r.allowed5xx)) {
    const [code, op] = key.split(' ');
    const g = byCode.get(code!) ?? { n: 0, ops: [] };
    g.n += n;
    g.ops.push(op!.slice(1, -1));
    byCode.set(code!, g);
  }
  const allowed = [...byCode].map(([code, g]) => `${code} ${g.n} (${g.ops.sort().join(' ')})`).join(', ') || 'none';
  return `fuzz ${t.service}: ${r.requests} requests over ${t.ops.length} operations × ${t.identities.length} identities in ${(r.ms / 1000).toFixed(1)} s (seed ${FUZZ_SEED}, runs ${FUZZ_RUNS}); statuses: ${statuses}; spec-defined 5xx: ${allowed}; failures: ${r.failures.length}`;
}

/**
 * The database variants the fuzz runs on: SQLite unless FUZZ_DATABASES names others (comma-separated, e.g.
 * "sqlite,postgres"); a named variant needs its TEST_*_URL. One variant keeps the run short.
 */
export function fuzzVariants(): Variant[] {
  const wanted = (process.env.FUZZ_DATABASES ?? 'sqlite').split(',').map((s) => s.trim());
  return variants().filter((v) => wanted.includes(v.name));
}

/**
 * Runs the fuzz, prints the summary (and every failure), and asserts it was clean: more than 1000 requests,
 * some of them answered 2xx (so cases got past authentication and validation), no failure.
 */
export async function assertFuzzClean(t: FuzzTarget): Promise<void> {
  const r = await fuzz(t);
  console.log(summary(t, r));
  if (r.failures.length) console.log(r.failures.join('\n'));
  assert.ok(r.requests > 1000, `only ${r.requests} requests`);
  assert.ok((r.byStatus['2xx'] ?? 0) > 0, 'no request got a 2xx: the fuzz never reached a handler');
  assert.deepEqual(r.failures.slice(0, 30), []);
}
