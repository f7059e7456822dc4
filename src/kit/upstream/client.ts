import type { IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { Agent, ProxyAgent, Socks5ProxyAgent, request, type Dispatcher, type FormData } from 'undici';
import { checkAddress, checkHostNow, guardedLookup, type AddressPolicy } from './address-policy.js';
import { BodyStream, type UpstreamStream } from './body-stream.js';
import type { ByteBudget } from './budget.js';
import { deadlineOf, type Deadline } from './deadline.js';
import type { CancelSignal } from '../http/cancel-signal.js';
import { asUpstreamError, UpstreamError } from './errors.js';

export interface UpstreamClientOptions {
  policy: AddressPolicy;
  /** Default deadline of a whole request, body included. */
  timeoutMs: number;
  /** Default cap on a response body. */
  maxBytes: number;
  /** Bytes of whole answers (request(), an error answer's text()) held at once, shared with other clients. */
  budget?: ByteBudget;
}

export interface UpstreamRequest {
  url: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** Text (JSON), or a form that undici encodes as multipart/form-data with its own content type. */
  body?: string | FormData;
  timeoutMs?: number;
  maxBytes?: number;
  /** http://, https:// or socks5:// proxy URL (a channel's `setting.proxy`). */
  proxy?: string;
  signal?: CancelSignal;
  /** Deadline for the answer's status and headers (default: the idle deadline of a stream, else the whole deadline). */
  firstByteMs?: number;
}

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Parses JSON text; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const MAX_DISPATCHERS = 64;
const MAX_HOSTS = 1024;
const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks5:', 'socks:']);

function parseUrl(raw: string, what: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UpstreamError('bad_url', `${what} is not an absolute URL`);
  }
  return u;
}

/**
 * Outgoing HTTP to operator-configured upstreams: every request has a deadline, every body a size cap,
 * every address passes the address policy (checked on the address actually connected to), redirects are
 * never followed, and an optional proxy (http, https or socks5) carries the request.
 */
export function createUpstreamClient(options: UpstreamClientOptions) {
  const lookup = guardedLookup(options.policy);
  const direct = new Agent({ connect: { lookup } as never, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  const proxies = new Map<string, Dispatcher>();

  function dispatcherFor(proxy: string | undefined): Dispatcher {
    if (!proxy) return direct;
    let d = proxies.get(proxy);
    if (d) return d;
    const u = parseUrl(proxy, 'proxy');
    d = u.protocol === 'socks5:' || u.protocol === 'socks:' ? new Socks5ProxyAgent(proxy) : new ProxyAgent({ uri: proxy });
    if (proxies.size >= MAX_DISPATCHERS) {
      const [oldest, old] = proxies.entries().next().value as [string, Dispatcher];
      proxies.delete(oldest);
      void old.close().catch(() => {});
    }
    proxies.set(proxy, d);
    return d;
  }

  /** The host of each upstream URL seen (a channel's few paths), parsed once: `new URL` on every request costs. */
  const hosts = new Map<string, { host: string; ip: boolean }>();

  function hostOf(url: string): { host: string; ip: boolean } {
    let h = hosts.get(url);
    if (h) return h;
    const u = parseUrl(url, 'upstream URL');
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UpstreamError('bad_url', 'upstream URL must be http:// or https://');
    const host = u.hostname.replace(/^\[|\]$/g, '');
    h = { host, ip: net.isIP(host) !== 0 };
    if (hosts.size >= MAX_HOSTS) hosts.clear();
    hosts.set(url, h);
    return h;
  }

  /**
   * Checks URL, scheme and (for IP literals and proxied targets, which skip the connect-time lookup) the
   * address. Without a proxy it needs no DNS and answers at once (no promise); with one it may resolve names.
   */
  function preflight(r: UpstreamRequest): Promise<void> | undefined {
    const { host, ip } = hostOf(r.url);
    if (!r.proxy) {
      try {
        if (ip) checkAddress(options.policy, host, host);
      } catch (e) {
        throw asUpstreamError(e, null);
      }
      return undefined;
    }
    const proxy = parseUrl(r.proxy, 'proxy');
    if (!PROXY_SCHEMES.has(proxy.protocol)) throw new UpstreamError('bad_url', 'proxy must be an http://, https:// or socks5:// URL');
    return (async () => {
      try {
        await checkHostNow(options.policy, host);
        await checkHostNow(options.policy, proxy.hostname);
      } catch (e) {
        throw asUpstreamError(e, null);
      }
    })();
  }

  async function open(r: UpstreamRequest, idleMs?: number) {
    const checking = preflight(r);
    if (checking) await checking;
    const timeoutMs = r.timeoutMs ?? options.timeoutMs;
    const deadline = deadlineOf(timeoutMs, r.signal);
    try {
      const res = await request(r.url, {
        method: r.method ?? 'GET',
        headers: r.headers,
        body: r.body,
        signal: deadline.signal,
        dispatcher: dispatcherFor(r.proxy),
        headersTimeout: Math.min(timeoutMs, r.firstByteMs ?? idleMs ?? timeoutMs),
        bodyTimeout: idleMs ?? timeoutMs,
      });
      return { res, deadline, timeoutMs };
    } catch (e) {
      deadline.clear();
      throw asUpstreamError(e, deadline.passed ? timeoutMs : null);
    }
  }

  /**
   * The whole body as text, at most maxBytes, each byte reserved in the budget while it is held. A declared
   * length is reserved at once and read into one buffer of that size; the bytes are decoded once, at the end.
   */
  async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number, deadline: Deadline, timeoutMs: number, declared?: number): Promise<string> {
    const budget = options.budget;
    let reserved = 0;
    const reserve = (bytes: number) => {
      if (budget && !budget.reserve(bytes)) throw new UpstreamError('over_budget', `upstream answers held in memory would exceed ${budget.limit} bytes`);
      reserved += bytes;
    };
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      const whole = declared !== undefined ? (reserve(declared), Buffer.allocUnsafe(declared)) : null;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        if (size + chunk.length > maxBytes) throw new UpstreamError('too_large', `response body exceeds ${maxBytes} bytes`);
        // Bytes beyond a declared length (undici normally refuses them) are kept and reserved apart.
        const rest = whole && size < whole.length ? chunk.subarray(chunk.copy(whole, size)) : chunk;
        if (rest.length) {
          reserve(rest.length);
          chunks.push(rest);
        }
        size += chunk.length;
      }
      if (!whole) return Buffer.concat(chunks, size).toString('utf8');
      return (chunks.length ? Buffer.concat([whole, ...chunks], size) : whole.subarray(0, size)).toString('utf8');
    } catch (e) {
      body.destroy();
      throw asUpstreamError(e, deadline.passed ? timeoutMs : null);
    } finally {
      deadline.clear();
      budget?.release(reserved);
    }
  }

  return {
    policy: options.policy,

    /** One request; the whole body read (capped) before it returns. Non-2xx statuses are returned, not thrown. */
    async request(r: UpstreamRequest): Promise<UpstreamResponse> {
      const maxBytes = r.maxBytes ?? options.maxBytes;
      const { res, deadline, timeoutMs } = await open(r);
      const length = Number(res.headers['content-length']);
      const declared = res.headers['content-length'] !== undefined && Number.isSafeInteger(length) && length >= 0 ? length : undefined;
      if (declared !== undefined && declared > maxBytes) {
        res.body.destroy();
        deadline.clear();
        throw new UpstreamError('too_large', `response body exceeds ${maxBytes} bytes`);
      }
      return { status: res.statusCode, headers: res.headers, text: await readCapped(res.body, maxBytes, deadline, timeoutMs, declared) };
    },

    /** A streamed response (SSE, NDJSON): lines as they arrive; `idleMs` bounds the wait for the next bytes. */
    async stream(r: UpstreamRequest & { idleMs?: number }): Promise<UpstreamStream> {
      const { res, deadline, timeoutMs } = await open(r, r.idleMs);
      return new BodyStream(res, r.maxBytes ?? options.maxBytes, deadline, timeoutMs, readCapped);
    },

    async close() {
      await Promise.allSettled([direct.close(), ...[...proxies.values()].map((d) => d.close())]);
      proxies.clear();
    },
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;
