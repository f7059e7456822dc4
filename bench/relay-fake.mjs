/**
 * The fake OpenAI-compatible upstream of the relay bench (bench/relay.ts), in its own process. Every POST
 * whose body asks `"stream":true` gets a fixed stream: 50 content chunks (the last with finish_reason), a
 * usage chunk and `data: [DONE]`; any other POST gets one fixed chat completion. Under /paced/ the stream's
 * chunks come one every 100 ms, for holding many streams open at once.
 * Reports {url} over IPC; stops on "stop" or when the parent goes away.
 */
import http from 'node:http';

const PACE_MS = 100;
const CHUNKS = 50;
const MODEL = 'gpt-4o-mini';
const USAGE = { prompt_tokens: 8, completion_tokens: CHUNKS, total_tokens: 8 + CHUNKS };

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1,
    model: MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake upstream of the relay bench.' }, finish_reason: 'stop' }],
    usage: USAGE,
  }),
);

const event = (data) => Buffer.from(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
const chunk = (choices) => ({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: MODEL, choices });
const STREAM = [
  ...Array.from({ length: CHUNKS }, (_, i) =>
    event(chunk([{ index: 0, delta: i === 0 ? { role: 'assistant', content: 'tok ' } : { content: 'tok ' }, finish_reason: i === CHUNKS - 1 ? 'stop' : null }])),
  ),
  event({ ...chunk([]), usage: USAGE }),
  event('[DONE]'),
];

function streamPaced(res) {
  let i = 0;
  const timer = setInterval(() => {
    res.write(STREAM[i++]);
    // The usage chunk and [DONE] follow the last content chunk at once.
    if (i < CHUNKS) return;
    clearInterval(timer);
    while (i < STREAM.length) res.write(STREAM[i++]);
    res.end();
  }, PACE_MS);
  res.on('close', () => clearInterval(timer));
}

const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') return res.writeHead(404).end();
    if (!Buffer.concat(parts).includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length });
      return res.end(COMPLETION);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (req.url.startsWith('/paced/')) return streamPaced(res);
    for (const piece of STREAM) res.write(piece);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (m) => m === 'stop' && process.exit(0));
process.on('disconnect', () => process.exit(0));
