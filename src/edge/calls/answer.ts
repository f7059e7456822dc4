import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { betaQueryOf, vendorHeadersOf, type RelayAnswer } from '../../contract/relay.js';
import type { LaneRequest } from '../../kit/http/fast-lane.js';
import { AppError } from '../../kit/http/errors.js';
import type { CancelSignal } from '../../kit/http/cancel-signal.js';
import { clientGone, closedEarly, writePiecesTo } from '../../kit/http/stream.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import type { EdgeIdentity } from '../keys/service.js';
import type { SyncCall, SyncCalls } from './service.js';

/** What a route says of its call: the format, (Gemini) the model and stream named in its path, (a form) its files. */
export type AskedCall = Pick<SyncCall, 'format' | 'modelInPath' | 'files'>;

/** What a call reads of its request: a Fastify request's fields, or a fast-lane request's (kit/http/fast-lane.ts). */
type CallRequest = Pick<LaneRequest, 'id' | 'url' | 'headers' | 'body'> & { edgeIdentity?: EdgeIdentity };

/** The request headers channel-affinity rules may read at the gateway: the user agent only. */
function affinityHeaders(req: CallRequest): Record<string, string> {
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' ? { 'user-agent': ua } : {};
}

/** Calls are refused (503 admission_disabled) unless public admission is controlled. */
export function checkAdmission(ctx: EdgeContext) {
  if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
}

/** The call of a request in its format: identity, body, the vendor headers and (Anthropic's) `?beta=true` it passes on. */
export function callOf(req: CallRequest, asked: AskedCall, signal: CancelSignal): SyncCall {
  return {
    identity: identityOf(req),
    ...asked,
    body: (req.body ?? {}) as Record<string, unknown>,
    requestId: req.id,
    signal,
    headers: affinityHeaders(req),
    vendorHeaders: vendorHeadersOf(asked.format, req.headers),
    betaQuery: betaQueryOf(asked.format, req.url),
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
  reply.hijack();
  return streamOut(reply.raw, req.id, answer, gone);
}

/**
 * answerCall on the fast lane (kit/http/fast-lane.ts), outside Fastify's request cycle: the same answer, with
 * the headers the route's hooks give it there (the lane sets Cache-Control and the CORS headers before).
 */
export async function answerCallOn(ctx: EdgeContext, calls: SyncCalls, asked: AskedCall, req: LaneRequest, res: ServerResponse) {
  checkAdmission(ctx);
  const gone = closedEarly(res);
  const answer = await calls.call(callOf(req, asked, gone));
  if (answer.kind === 'json') {
    res.writeHead(200, { 'x-request-id': req.id, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(answer.body) });
    res.end(answer.body);
    return;
  }
  return streamOut(res, req.id, answer, gone);
}

/** A streamed answer (text or bytes) written at the caller's pace; bytes cut by an upstream failure end the connection. */
async function streamOut(res: ServerResponse, requestId: string, answer: Exclude<RelayAnswer, { kind: 'json' }>, gone: CancelSignal) {
  const pieces = answer.kind === 'bytes' ? answer.chunks : answer.pieces;
  try {
    if (await writePiecesTo(res, { contentType: answer.contentType, headers: { 'x-request-id': requestId } }, pieces, gone)) res.end();
  } catch {
    res.destroy();
  }
}

/** Counts a prompt (never charged): the number, for the route to answer in its format. */
export async function countCall(ctx: EdgeContext, calls: SyncCalls, asked: AskedCall, req: FastifyRequest, reply: FastifyReply): Promise<number> {
  checkAdmission(ctx);
  return (await calls.countTokens(callOf(req, asked, clientGone(reply)))).tokens;
}
