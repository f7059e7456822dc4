/**
 * The floor of the relay bench (bench/relay.ts), in its own process: a bare pass-through proxy. Each request
 * is forwarded to BENCH_UPSTREAM_URL (same path) with undici's request(), its body streamed through, and
 * the answer piped back as it arrives (streams included); nothing is parsed. Reports {url} over IPC; stops
 * on "stop" or when the parent goes away.
 */
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL is required');
const dispatcher = new Agent({ keepAliveTimeout: 60_000 });
/** Connection-level headers, which belong to one hop only. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'host']);

function forwarded(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
  return out;
}

const server = http.createServer(async (req, res) => {
  try {
    const answer = await request(upstream + req.url, { method: req.method, headers: forwarded(req.headers), body: req, dispatcher });
    res.writeHead(answer.statusCode, forwarded(answer.headers));
    await pipeline(answer.body, res);
  } catch {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (m) => m === 'stop' && process.exit(0));
process.on('disconnect', () => process.exit(0));
