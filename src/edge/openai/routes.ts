import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_MODERATION_MODEL, type RelayFormat } from '../../contract/relay.js';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { clientGone, writePieces } from '../../kit/http/stream.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import { listModels } from '../models/store.js';
import type { SyncCalls } from './service.js';
import { ChatCompletion, EmbeddingList, ModelList, ModerationResult, RerankResult, TextCompletion } from '../../contract/wire-schemas.js';
import { edgeErrors } from '../schemas.js';

const MODEL = Type.String({ minLength: 1, maxLength: 128 });
/** The fields the edge reads; the rest of the OpenAI body goes to the gateway relay as sent. */
export const OPENAI_BODIES = {
  chat: Type.Object({ model: MODEL, messages: Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), { minItems: 1 }), stream: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
  embeddings: Type.Object({ model: MODEL, input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]) }, { additionalProperties: true }),
  completions: Type.Object(
    {
      model: MODEL,
      prompt: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]),
      max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
      n: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
      echo: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      suffix: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      stream: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: true },
  ),
  moderations: Type.Object({ model: Type.Optional(MODEL), input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))]) }, { additionalProperties: true }),
  rerank: Type.Object(
    {
      model: MODEL,
      query: Type.String(),
      documents: Type.Array(Type.Union([Type.String(), Type.Object({}, { additionalProperties: true })]), { minItems: 1 }),
      top_n: Type.Optional(Type.Integer({ minimum: 1 })),
      return_documents: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: true },
  ),
};

function affinityHeaders(req: FastifyRequest): Record<string, string> {
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' ? { 'user-agent': ua } : {};
}

/** Serves one OpenAI-compatible call: the relay's answer as it came, or its stream at the caller's pace. */
export async function answerCall(ctx: EdgeContext, calls: SyncCalls, format: RelayFormat, req: FastifyRequest, reply: FastifyReply) {
  if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
  const gone = clientGone(reply);
  const answer = await calls.call({ identity: identityOf(req), format, body: req.body as Record<string, unknown>, requestId: req.id, signal: gone, headers: affinityHeaders(req) });
  if (answer.kind === 'json') return reply.status(200).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  if (await writePieces(reply, { contentType: answer.contentType, headers: { 'x-request-id': req.id } }, answer.pieces, gone)) reply.raw.end();
}

const ANSWERS = {
  chat: { 200: { description: 'The chat completion, or server-sent events when streamed', schema: ChatCompletion, stream: true } },
  embeddings: { 200: { description: 'The embeddings', schema: EmbeddingList } },
  completions: { 200: { description: 'The text completion, or server-sent events when streamed', schema: TextCompletion, stream: true } },
  moderations: { 200: { description: 'The moderation results', schema: ModerationResult } },
  rerank: { 200: { description: "The ranked documents in Jina's shape", schema: RerankResult } },
};

/** E04–E06, E12–E14: the OpenAI-compatible API unchanged OpenAI SDKs use, with the same svc_sk_… keys. */
export function openaiRoutes(ctx: EdgeContext, calls: SyncCalls) {
  const bodyLimit = ctx?.config.edge.runs.maxRequestBytes;
  return [
    implement('E04', { answers: ANSWERS.chat, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.chat }, bodyLimit, noStore: true, handler: (req, reply) => answerCall(ctx, calls, 'chat', req, reply) }),
    implement('E05', { answers: ANSWERS.embeddings, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.embeddings }, bodyLimit, noStore: true, handler: (req, reply) => answerCall(ctx, calls, 'embeddings', req, reply) }),
    implement('E12', { answers: ANSWERS.completions, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.completions }, bodyLimit, noStore: true, handler: (req, reply) => answerCall(ctx, calls, 'completions', req, reply) }),
    implement('E13', {
      answers: ANSWERS.moderations,
      errors: edgeErrors.call,
      schema: { body: OPENAI_BODIES.moderations },
      bodyLimit,
      noStore: true,
      handler: (req, reply) => {
        req.body = { model: DEFAULT_MODERATION_MODEL, ...req.body };
        return answerCall(ctx, calls, 'moderations', req, reply);
      },
    }),
    implement('E14', { answers: ANSWERS.rerank, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.rerank }, bodyLimit, noStore: true, handler: (req, reply) => answerCall(ctx, calls, 'rerank', req, reply) }),
    implement('E06', {
      answers: { 200: { description: 'The enabled public models', schema: ModelList } },
      errors: edgeErrors.models,
      noStore: true,
      handler: async (req) => {
        if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
        // A token with model_limits sees only the models it may call (as new-api's /v1/models).
        const allowed = identityOf(req).token?.models;
        const models = (await listModels(ctx.db, true)).filter((m) => !allowed || allowed.has(m.public_model_id));
        return { object: 'list', data: models.map((m) => ({ id: m.public_model_id, object: 'model', created: Number(m.updated_at), owned_by: 'system' })) };
      },
    }),
  ];
}
