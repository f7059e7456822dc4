/**
 * What the request cycle the edge runs every call through costs (bench/edge-server.ts fastify): the kit's HTTP
 * app built as the edge builds it (createHttpApp with the edge's options and error renderer, the ops endpoints
 * and their metrics hook) with one trivial `POST /v1/chat/completions` (a JSON body schema of the chat's shape,
 * a fixed completion as the answer), and a node:http server in the same process that parses the same body
 * and answers the same bytes. The difference in CPU per request is what Fastify, the body schema, the request
 * id, the request log line and the metrics cost a call, before the edge does any of its own work.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../src/config/index.js';
import { errorCatalog } from '../src/contract/errors/index.js';
import { renderEdgeError } from '../src/edge/errors.js';
import { createHttpApp } from '../src/kit/http/app.js';
import { installOpsEndpoints } from '../src/kit/http/ops-endpoints.js';
import type { Runtime } from '../src/runtime.js';

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake upstream of the relay bench.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 8, completion_tokens: 50, total_tokens: 58 },
  }),
);

const CHAT_BODY = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: { type: 'array', minItems: 1, items: { type: 'object', required: ['role'], properties: { role: { type: 'string' } } } },
    stream: { type: 'boolean' },
  },
};

export async function fastifyCycle(config: Config, runtime: Runtime) {
  const app = createHttpApp({
    logger: runtime.log.child({ deployable: 'edge' }),
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    maxJsonDepth: config.bodyMaxDepth,
    catalog: errorCatalog,
    renderError: renderEdgeError,
    ownRequestIds: true,
  });
  installOpsEndpoints(app, { name: 'edge', access: { token: config.opsToken, behindProxy: config.trustProxy }, readiness: {}, openapi: () => ({}) });
  app.post('/v1/chat/completions', { schema: { body: CHAT_BODY }, config: { operationId: 'bench.chat' } }, (_req, reply) => {
    reply.header('content-type', 'application/json').send(COMPLETION);
  });

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: { model?: unknown } | undefined;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model?: unknown };
      } catch {
        body = undefined;
      }
      if (req.method !== 'POST' || typeof body?.model !== 'string') return res.writeHead(400).end();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length });
      res.end(COMPLETION);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  app.addHook('onClose', async () => void server.close());
  return { app, httpUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
