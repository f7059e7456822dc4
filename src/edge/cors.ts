import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** The routes browsers may call from another origin: the API keys' routes (new-api allows every origin on its relay). */
const CROSS_ORIGIN = /^\/v1(\/|$|\?)/;
/** Request headers a browser may send: what SDKs send (their own x-stainless-* among them), echoed back when asked. */
const HEADER_LIST = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/;

/**
 * Cross-origin calls of the /v1 routes from a browser (the account console's playground, a customer's web app):
 * any origin, never with cookies — these routes authenticate by the API key in the request, so a page can do
 * nothing with them that its own key does not allow. A preflight is answered here, before routing.
 */
export function installCors(app: FastifyInstance) {
  // The routes of the fast lane (kit/http/fast-lane.ts) are POSTs: never a preflight.
  app.fastLane?.onRequest((req, res) => {
    if (CROSS_ORIGIN.test(req.url)) allowOrigin(res);
  });
  app.addHook('onRequest', async (req, reply) => {
    if (!CROSS_ORIGIN.test(req.url)) return;
    // Set on the raw response so that streamed answers (written after the reply is hijacked) carry it too.
    allowOrigin(reply.raw);
    if (req.method !== 'OPTIONS' || !req.headers['access-control-request-method']) return;
    const asked = String(req.headers['access-control-request-headers'] ?? '').trim();
    reply
      .code(204)
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header('access-control-allow-headers', HEADER_LIST.test(asked) ? asked : 'authorization, content-type')
      .header('access-control-max-age', '600')
      .header('vary', 'access-control-request-headers')
      .send();
    return reply;
  });
}

function allowOrigin(res: ServerResponse) {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', 'x-request-id, retry-after');
}
