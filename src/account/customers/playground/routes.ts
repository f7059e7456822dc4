import type { FastifyRequest } from 'fastify';
import { PlaygroundChatBody } from '../../../contract/customer-wire.js';
import { errorCatalog } from '../../../contract/errors/index.js';
import { implement } from '../../../contract/types.js';
import { ChatCompletion } from '../../../contract/wire-schemas.js';
import { langOf, type ErrorDef } from '../../../kit/http/errors.js';
import { clientGone, writePieces } from '../../../kit/http/stream.js';
import type { RenderedError } from '../../../kit/http/app.js';
import { identityOf } from '../../auth.js';
import { EDGE_CALL_ERRORS } from '../../../contract/errors/edge.js';
import { EDGE_ERRORS } from '../edge.js';
import type { PlaygroundService } from './service.js';

const PLAYGROUND_PATH = '/pg/';

/** OpenAI's error class of a catalog code without one of its own, by its status. */
function typeOf(def: ErrorDef | undefined, status: number): string {
  if (def?.type) return def.type;
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

/**
 * The account's errors under /pg/ in OpenAI's shape {error: {message, type, code, param}, requestId}, as
 * new-api's playground answers (and as the edge answers a key's call); the rest of the service keeps its envelope.
 */
export function renderPlaygroundError(req: FastifyRequest, e: { code: string; status: number; message: string; params?: Record<string, string | number> }): RenderedError | null {
  if (!req.url.startsWith(PLAYGROUND_PATH)) return null;
  // A refusal new-api's dashboard answers with HTTP 200 (CUSTOMER_INVALID) is a client error in this shape.
  const status = e.status >= 400 ? e.status : 400;
  const field = e.params?.field;
  const error = { message: e.message, type: typeOf(errorCatalog[e.code], status), code: e.code, param: field === undefined ? null : String(field) };
  return { status, body: { error, requestId: req.id } };
}

/**
 * AP49, new-api's `POST /pg/chat/completions`: the signed-in user's chat through the edge, answered as the
 * edge answers it — the completion, its event stream at the browser's pace, or the edge's refusal with its
 * status — and billed to the user's wallet. A browser session only (a personal access token is
 * AUTH_SESSION_REQUIRED, as new-api refuses its access tokens here).
 */
export function playgroundRoutes(playground: PlaygroundService) {
  return [
    implement('AP49', {
      schema: { body: PlaygroundChatBody },
      // Undefined when only the manifest is built (no services).
      bodyLimit: playground?.bodyLimit,
      answers: { 200: { description: 'The chat completion, or server-sent events when streamed', schema: ChatCompletion, stream: true } },
      // Its own, and the edge's answers to a call passed on (as the edge spells them).
      errors: [...EDGE_ERRORS, 'PLAYGROUND_GROUP_DENIED', ...EDGE_CALL_ERRORS, 'rate_limited'],
      handler: async (req, reply) => {
        const gone = clientGone(reply);
        const lang = langOf(req.headers['accept-language']);
        const answer = await playground.chat(identityOf(req).userId, req.body, { lang, requestId: req.id, signal: gone });
        if (answer.kind === 'refused') {
          if (answer.retryAfter !== undefined) reply.header('retry-after', String(answer.retryAfter));
          return reply.status(answer.status).send({ error: answer.error, requestId: req.id });
        }
        if (answer.kind === 'json') return reply.status(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
        const headers = { 'x-request-id': req.id, 'cache-control': 'no-store' };
        if (await writePieces(reply, { contentType: answer.contentType, headers }, answer.pieces, gone)) reply.raw.end();
      },
    }),
  ];
}
