import type { FastifyReply, FastifyRequest } from 'fastify';
import { vendorHeadersOf } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import { clientGone, writePieces } from '../../kit/http/stream.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import type { SyncCall, SyncCalls } from './service.js';

/** What a route says of its call: the format, (Gemini) the model and stream named in its path, (a form) its files. */
export type AskedCall = Pick<SyncCall, 'format' | 'modelInPath' | 'files'>;

/** The request headers channel-affinity rules may read at the gateway: the user agent only. */
function affinityHeaders(req: FastifyRequest): Record<string, string> {
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' ? { 'user-agent': ua } : {};
}

/** Calls are refused (503 admission_disabled) unless public admission is controlled. */
export function checkAdmission(ctx: EdgeContext) {
  if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
}

/** The call of a request in its format: identity, body, the vendor headers it passes on. */
export function callOf(req: FastifyRequest, asked: AskedCall, signal: AbortSignal): SyncCall {
  return {
    identity: identityOf(req),
    ...asked,
    body: (req.body ?? {}) as Record<string, unknown>,
    requestId: req.id,
    signal,
    headers: affinityHeaders(req),
    vendorHeaders: vendorHeadersOf(asked.format, req.headers),
  };
}

/**
 * Serves one call in its caller's format: the relay's answer as it came, or its stream (of text or bytes) at
 * the caller's pace; bytes cut by an upstream failure end the connection without their last chunk.
 *
 * What the client sees is charged: a whole answer is sent only after its settlement committed, and a stream's
 * end only after it, with the closing event the relay writes last ([DONE], message_stop, response.completed
 * of a converted stream; over the HTTP relay link, at least the closing blank line of any stream) — SyncCalls'
 * endsCharged. A native pass-through stream in process (an Anthropic or Gemini channel serving its own format)
 * has its last event out as it came; only its end waits. A crash before that cuts the answer, and `edge
 * reconcile` settles the run from the gateway's log; an answer a client received whole is never left to it.
 */
export async function answerCall(ctx: EdgeContext, calls: SyncCalls, asked: AskedCall, req: FastifyRequest, reply: FastifyReply) {
  checkAdmission(ctx);
  const gone = clientGone(reply);
  const answer = await calls.call(callOf(req, asked, gone));
  if (answer.kind === 'json') return reply.status(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  const pieces = answer.kind === 'bytes' ? answer.chunks : answer.pieces;
  try {
    if (await writePieces(reply, { contentType: answer.contentType, headers: { 'x-request-id': req.id } }, pieces, gone)) reply.raw.end();
  } catch {
    reply.raw.destroy();
  }
}

/** Counts a prompt (never charged): the number, for the route to answer in its format. */
export async function countCall(ctx: EdgeContext, calls: SyncCalls, asked: AskedCall, req: FastifyRequest, reply: FastifyReply): Promise<number> {
  checkAdmission(ctx);
  return (await calls.countTokens(callOf(req, asked, clientGone(reply)))).tokens;
}
