/**
 * The five OpenAI-compatible upstreams of the chaos bench (bench/chaos.ts), in one process, each under its own
 * path prefix (/u1 … /u5, so `POST /u3/v1/chat/completions`). u5 always answers; u1–u4 draw every answer
 * from the chaos mix with a seeded generator of their own: 30 % 5xx (500, 502, 503), 5 % 429 with
 * `Retry-After: 1`, 5 % hangs (no status line until the caller gives up), 5 % empty answers (a stream of
 * only `[DONE]`, or a 200 with an empty body), 5 % HTTP 200 error payloads, 5 % cuts (a stream reset after
 * two content chunks, or a whole answer reset half-way), else the proper answer. A good answer is
 * "Hello from uN." (whole, or 4 content chunks + finish + usage + [DONE]).
 *
 * `GET /stats` answers the requests each upstream received since the last `POST /reset?seed=N`, which also
 * restarts the draws. Reports {url} over IPC; stops on "stop" or when the parent goes away.
 */
import http from 'node:http';

const UPSTREAMS = ['u1', 'u2', 'u3', 'u4', 'u5'];
const HEALTHY = 'u5';
const MIX = [
  ['5xx', 0.3],
  ['429', 0.05],
  ['hang', 0.05],
  ['empty', 0.05],
  ['error200', 0.05],
  ['cut', 0.05],
];
const USAGE = { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 };

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const hash = (s) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);

let draws = new Map();
let counts = {};
function reset(seed) {
  draws = new Map(UPSTREAMS.filter((u) => u !== HEALTHY).map((u) => [u, mulberry32(seed ^ hash(u))]));
  counts = Object.fromEntries(UPSTREAMS.map((u) => [u, 0]));
}
reset(Number(process.env.BENCH_CHAOS_SEED ?? 1));

function draw(name) {
  const random = draws.get(name);
  if (!random) return 'ok';
  let r = random();
  for (const [kind, p] of MIX) {
    if (r < p) return kind;
    r -= p;
  }
  return 'ok';
}

const chunk = (delta, finish = null) => ({ id: 'chatcmpl-chaos', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] });
const event = (data) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const pieces = (name) => ['Hello', ' from', ` ${name}`, '.'];
const completion = (name) =>
  JSON.stringify({ id: 'chatcmpl-chaos', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: pieces(name).join('') }, finish_reason: 'stop' }], usage: USAGE });
const streamEvents = (name) => [
  ...pieces(name).map((p, i) => event(chunk(i === 0 ? { role: 'assistant', content: p } : { content: p }))),
  event(chunk({}, 'stop')),
  event({ ...chunk({}), choices: [], usage: USAGE }),
  event('[DONE]'),
];
const json = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

function answer(name, stream, res) {
  const kind = draw(name);
  switch (kind) {
    case '5xx': {
      const status = [500, 502, 503][Math.floor(draws.get(name)() * 3)];
      return json(res, status, { error: { message: `chaos ${status}`, type: 'server_error' } });
    }
    case '429':
      res.setHeader('retry-after', '1');
      return json(res, 429, { error: { message: 'chaos: rate limited', type: 'requests', code: 'rate_limit_exceeded' } });
    case 'hang': {
      const t = setTimeout(() => res.destroy(), 60_000);
      res.on('close', () => clearTimeout(t));
      return;
    }
    case 'empty':
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 0 });
        return res.end();
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(event('[DONE]'));
    case 'error200':
      if (!stream) return json(res, 200, { error: { message: 'chaos: the model is overloaded', type: 'server_error' } });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end(event({ error: { message: 'chaos: the model is overloaded', type: 'server_error' } }));
    case 'cut':
      if (!stream) {
        const body = completion(name);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(body.slice(0, body.length >> 1));
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(streamEvents(name).slice(0, 2).join(''));
      }
      return void setTimeout(() => res.destroy(), 5);
    default:
      if (!stream) {
        const body = completion(name);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        return res.end(body);
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      return res.end(streamEvents(name).join(''));
  }
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://fake');
    if (req.method === 'GET' && url.pathname === '/stats') return json(res, 200, counts);
    if (req.method === 'POST' && url.pathname === '/reset') {
      reset(Number(url.searchParams.get('seed') ?? 1));
      return json(res, 200, counts);
    }
    const m = /^\/(u\d)\/v1\/chat\/completions$/.exec(url.pathname);
    if (req.method !== 'POST' || !m || !(m[1] in counts)) return json(res, 404, { error: { message: `no route ${req.method} ${url.pathname}` } });
    counts[m[1]]++;
    answer(m[1], Buffer.concat(parts).includes('"stream":true'), res);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (m) => m === 'stop' && process.exit(0));
process.on('disconnect', () => process.exit(0));
