import assert from 'node:assert/strict';
import { signWorkloadToken, type WorkloadKey } from '../../src/kit/crypto/workload-token.js';
import type { FakeUpstream, Seen } from './fake-upstream.js';
import type { GatewayServer } from './gateway.js';
import { readReply } from './http.js';

/** The HS256 key the test gateways accept for the relay's internal API. */
export const RELAY_SECRET = 'relay-test-secret-0123456789abcdef-0123456789';
export const RELAY_KEY: WorkloadKey = { alg: 'HS256', secret: RELAY_SECRET };

/** Gateway environment for relay tests: the internal API on, loopback upstreams allowed. */
export const RELAY_ENV = { GATEWAY_RELAY_TOKEN_SECRET: RELAY_SECRET, GATEWAY_UPSTREAM_ALLOW_LIST: '127.0.0.1' };

export function relayToken(opts: { issuer?: string; subject?: string; audience?: string; group?: string; ttlSeconds?: number; key?: WorkloadKey } = {}) {
  return signWorkloadToken(opts.key ?? RELAY_KEY, {
    issuer: opts.issuer ?? 'edge',
    subject: opts.subject ?? 'acme',
    audience: opts.audience ?? 'gateway-relay',
    ttlSeconds: opts.ttlSeconds,
    claims: opts.group ? { group: opts.group } : {},
  });
}

export interface RelayReply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
  /** x-relay-summary of a whole answer, or the closing `: relay-summary` comment of a stream. */
  summary: any;
  /** The `data:` payloads of a stream, parsed when JSON. */
  events: any[];
}

/**
 * One call of the relay's internal API with a fresh workload token unless `token` is given: `path` after
 * /relay/v1 (GR01–GR03, GR05), or a whole path starting with /relay/ (GR06's /relay/v1beta/…).
 */
export async function relay(baseUrl: string, path: string, body: unknown, opts: { token?: string | null; group?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}): Promise<RelayReply> {
  const token = opts.token === undefined ? await relayToken({ group: opts.group }) : opts.token;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(baseUrl + (path.startsWith('/relay/') ? path : '/relay/v1' + path), { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal: opts.signal });
  const reply = await readReply(res, 'POST');
  const header = res.headers.get('x-relay-summary');
  let summary: any = header ? JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) : null;
  const events: any[] = [];
  for (const line of reply.text.split('\n')) {
    if (line.startsWith(': relay-summary ')) summary = JSON.parse(line.slice(': relay-summary '.length));
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    try {
      events.push(JSON.parse(data));
    } catch {
      events.push(data);
    }
  }
  return { ...reply, summary, events };
}

/** The text of a chat stream's content deltas. */
export function streamedText(events: any[]): string {
  return events.map((e) => e?.choices?.[0]?.delta?.content ?? '').join('');
}

/** The one request the fake upstream received at `pathname` since it was last cleared. */
export function sentOnce(up: FakeUpstream, pathname: string): Seen {
  const hits = up.seen.filter((x) => x.path === pathname);
  assert.equal(hits.length, 1, `${pathname}: ${up.seen.map((x) => x.path).join(', ')}`);
  return hits[0]!;
}

/** Ends a relay test file: the upstream key never reached an answer or a log line, then the gateway and the upstream close. */
export async function closeRelayTest(s: GatewayServer | undefined, up: FakeUpstream | undefined, key: string) {
  if (s) {
    assert.ok(!s.everything().includes(key), 'an upstream key leaked into an answer or a log line');
    await s.close();
  }
  await up?.close();
}
