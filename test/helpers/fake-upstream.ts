import http from 'node:http';
import net from 'node:net';

/** One request as the fake upstream saw it. */
export interface Seen {
  method: string;
  path: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body's bytes as they came (a multipart form's file). */
  raw: Buffer;
  json: any;
}

export type FakeHandler = (req: Seen, res: http.ServerResponse) => void | Promise<void>;

/**
 * A small upstream HTTP server on 127.0.0.1 (random port) for tests: routes by "METHOD /path" (query
 * ignored), records every request, and answers 404 JSON for anything unrouted. Handlers write real wire
 * formats and can stall, send huge bodies or cut a stream.
 */
export async function startFakeUpstream(routes: Record<string, FakeHandler> = {}) {
  const seen: Seen[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const raw = Buffer.concat(chunks);
      const body = raw.toString('utf8');
      let json: any;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const s: Seen = { method: req.method ?? 'GET', path: url.pathname, url, headers: req.headers, body, raw, json };
      seen.push(s);
      const handler = routes[`${s.method} ${s.path}`];
      try {
        if (handler) await handler(s, res);
        else sendJson(res, 404, { error: { message: `no route ${s.method} ${s.path}`, type: 'not_found' } });
      } catch (e) {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(e) } });
        else res.destroy();
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    routes,
    seen,
    /** Requests to one path. */
    to: (path: string) => seen.filter((s) => s.path === path),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type FakeUpstream = Awaited<ReturnType<typeof startFakeUpstream>>;

export function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Writes Server-Sent Events, one `data:` line each, then ends (or cuts the connection when `cut`). */
export function sendSse(res: http.ServerResponse, events: unknown[], opts: { done?: boolean; cut?: boolean } = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  if (opts.cut) {
    res.destroy();
    return;
  }
  if (opts.done !== false) res.write('data: [DONE]\n\n');
  res.end();
}

/** Answers after `ms` (a slow upstream); the test's timeout should fire first. */
export function after(ms: number, then: FakeHandler): FakeHandler {
  return (req, res) => new Promise((resolve) => setTimeout(() => resolve(then(req, res)), ms));
}

/** A chunked body of `bytes` bytes without a content-length (the cap must apply while reading). */
export function hugeBody(bytes: number): FakeHandler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!res.write(chunk)) return res.once('drain', pump);
      }
      res.end();
    };
    pump();
  };
}

/**
 * A forward proxy for tests (HTTP CONNECT tunnels, which undici's ProxyAgent uses for every target):
 * counts tunnels so a test can tell the request went through it.
 */
export async function startConnectProxy() {
  const tunnels: string[] = [];
  const server = http.createServer((_req, res) => sendJson(res, 405, { error: 'CONNECT only' }));
  server.on('connect', (req, client: net.Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const target = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      target.write(head);
      target.pipe(client);
      client.pipe(target);
    });
    target.on('error', () => client.destroy());
    client.on('error', () => target.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
