import { CustomerRefusal, type CustomerPort } from '../../../contract/customer.js';
import { CUSTOMER_REFUSAL_CODES, PlaygroundWireBody } from '../../../contract/customer-wire.js';
import { implement } from '../../../contract/types.js';
import { ChatCompletion } from '../../../contract/wire-schemas.js';
import { langOf } from '../../../kit/http/errors.js';
import { clientGone, writePieces } from '../../../kit/http/stream.js';
import type { EdgeContext } from '../../context.js';
import { edgeErrors } from '../../schemas.js';
import { refusal } from './routes.js';

/** Room for ER02's wrapper around the chat body (user id, group, request id). */
const WRAPPER_BYTES = 1024;

/**
 * ER02: the playground chat of an account user for the account service in another process. Answers as
 * /v1/chat/completions does — the completion, its event stream at the reader's pace, or the edge's
 * OpenAI-shaped error with its status — so the account passes the answer on unchanged.
 */
export function playgroundRoutes(ctx: EdgeContext, port: CustomerPort) {
  const bodyLimit = ctx ? ctx.config.edge.runs.maxRequestBytes + WRAPPER_BYTES : undefined;
  return [
    implement('ER02', {
      schema: { body: PlaygroundWireBody },
      bodyLimit,
      noStore: true,
      answers: { 200: { description: 'The chat completion, or server-sent events when streamed', schema: ChatCompletion, stream: true } },
      errors: [...edgeErrors.call, 'rate_limited', CUSTOMER_REFUSAL_CODES.invalid],
      handler: async (req, reply) => {
        const gone = clientGone(reply);
        let answer;
        try {
          answer = await port.playgroundChat({ ...req.body, lang: langOf(req.headers['accept-language']), signal: gone });
        } catch (e) {
          throw e instanceof CustomerRefusal ? refusal(e) : e;
        }
        if (answer.kind === 'refused') {
          if (answer.retryAfter !== undefined) reply.header('retry-after', String(answer.retryAfter));
          return reply.status(answer.status).send({ error: answer.error, requestId: req.id });
        }
        if (answer.kind === 'json') return reply.status(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
        if (await writePieces(reply, { contentType: answer.contentType, headers: { 'x-request-id': req.id } }, answer.pieces, gone)) reply.raw.end();
      },
    }),
  ];
}
