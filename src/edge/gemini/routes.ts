import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { parseGeminiTarget } from '../../contract/relay.js';
import { implement, type OperationRequest } from '../../contract/types.js';
import { GeminiResponse, GeminiTokenCount } from '../../contract/wire-schemas.js';
import { AppError } from '../../kit/http/errors.js';
import { answerCall, countCall } from '../calls/answer.js';
import type { SyncCalls } from '../calls/service.js';
import type { EdgeContext } from '../context.js';
import { edgeErrors } from '../schemas.js';

const OBJECT = Type.Object({}, { additionalProperties: true });

/** The route of Gemini's `models/{model}:{action}`: the fields the edge reads, the rest goes to the relay as sent. */
const GEMINI_ROUTE = {
  params: Type.Object({ target: Type.String({ minLength: 1, maxLength: 300 }) }),
  // `key` is where Google's clients may send the key (auth.ts); never logged (the request log drops the query).
  querystring: Type.Object({ alt: Type.Optional(Type.String({ maxLength: 16 })), key: Type.Optional(Type.String({ maxLength: 512 })) }),
  body: Type.Object(
    {
      contents: Type.Optional(Type.Array(Type.Object({ parts: Type.Array(OBJECT) }, { additionalProperties: true }), { minItems: 1 })),
      // countTokens may send the whole call instead of its contents.
      generateContentRequest: Type.Optional(OBJECT),
    },
    { additionalProperties: true },
  ),
};
type GeminiRequest = OperationRequest<typeof GEMINI_ROUTE>;

/** A generateContent call (reserved and charged) or a countTokens (never charged), as the path says. */
async function serveGemini(ctx: EdgeContext, calls: SyncCalls, req: GeminiRequest, reply: FastifyReply) {
  const target = parseGeminiTarget(req.params.target, req.query.alt);
  if (typeof target === 'string') throw new AppError('invalid_request_body', { params: { detail: target, field: 'target' } });
  const { model, action, stream } = target;
  if (action === 'countTokens') {
    if (!req.body.contents && !req.body.generateContentRequest) throw new AppError('invalid_request_body', { params: { detail: 'contents or generateContentRequest is required', field: 'contents' } });
    return { totalTokens: await countCall(ctx, calls, { format: 'gemini', modelInPath: { model, stream: false } }, req, reply) };
  }
  if (!req.body.contents) throw new AppError('invalid_request_body', { params: { detail: 'contents is required', field: 'contents' } });
  return answerCall(ctx, calls, { format: 'gemini', modelInPath: { model, stream } }, req, reply);
}

/**
 * E09, E10: Gemini's `models/{model}:generateContent`, `:streamGenerateContent?alt=sse` and `:countTokens`
 * under /v1beta and /v1 (where @google/genai 3.x sends them), with the same keys in `x-goog-api-key` or
 * `?key=`, billed as every call; errors in Google's shape (wire-errors.ts).
 */
export function geminiRoutes(ctx: EdgeContext, calls: SyncCalls) {
  const bodyLimit = ctx?.config.edge.runs.maxRequestBytes;
  const route = {
    answers: { 200: { description: "generateContent's answer, server-sent events for :streamGenerateContent?alt=sse, {totalTokens} for :countTokens", schema: Type.Union([GeminiResponse, GeminiTokenCount]), stream: true } },
    errors: edgeErrors.gemini,
    schema: GEMINI_ROUTE,
    bodyLimit,
    noStore: true,
    handler: (req: GeminiRequest, reply: FastifyReply) => serveGemini(ctx, calls, req, reply),
  };
  return [implement('E09', route), implement('E10', route)];
}
