import type { ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LaneRequest } from '../../kit/http/fast-lane.js';
import { DEFAULT_MODERATION_MODEL } from '../../contract/relay.js';
import { implement } from '../../contract/types.js';
import { answerCall, answerCallOn, type AskedCall } from '../calls/answer.js';
import type { SyncCalls } from '../calls/service.js';
import type { EdgeContext } from '../context.js';
import { ChatCompletion, EmbeddingList, ModerationResult, RerankResult, TextCompletion } from '../../contract/wire-schemas.js';
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

const ANSWERS = {
  chat: { 200: { description: 'The chat completion, or server-sent events when streamed', schema: ChatCompletion, stream: true } },
  embeddings: { 200: { description: 'The embeddings', schema: EmbeddingList } },
  completions: { 200: { description: 'The text completion, or server-sent events when streamed', schema: TextCompletion, stream: true } },
  moderations: { 200: { description: 'The moderation results', schema: ModerationResult } },
  rerank: { 200: { description: "The ranked documents in Jina's shape", schema: RerankResult } },
};

/** A call's route on Fastify and on the fast lane (kit/http/fast-lane.ts), which the JSON calls take. */
function served(ctx: EdgeContext, calls: SyncCalls, asked: AskedCall) {
  return {
    handler: (req: FastifyRequest, reply: FastifyReply) => answerCall(ctx, calls, asked, req, reply),
    lane: (req: LaneRequest, res: ServerResponse) => answerCallOn(ctx, calls, asked, req, res),
  };
}

/** E04, E05, E12–E14: the OpenAI-compatible API unchanged OpenAI SDKs use, with the same svc_sk_… keys. */
export function openaiRoutes(ctx: EdgeContext, calls: SyncCalls) {
  const bodyLimit = ctx?.config.edge.runs.maxRequestBytes;
  return [
    implement('E04', { answers: ANSWERS.chat, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.chat }, bodyLimit, noStore: true, ...served(ctx, calls, { format: 'chat' }) }),
    implement('E05', { answers: ANSWERS.embeddings, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.embeddings }, bodyLimit, noStore: true, ...served(ctx, calls, { format: 'embeddings' }) }),
    implement('E12', { answers: ANSWERS.completions, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.completions }, bodyLimit, noStore: true, ...served(ctx, calls, { format: 'completions' }) }),
    implement('E13', {
      answers: ANSWERS.moderations,
      errors: edgeErrors.call,
      schema: { body: OPENAI_BODIES.moderations },
      bodyLimit,
      noStore: true,
      handler: (req, reply) => {
        req.body = { model: DEFAULT_MODERATION_MODEL, ...req.body };
        return answerCall(ctx, calls, { format: 'moderations' }, req, reply);
      },
    }),
    implement('E14', { answers: ANSWERS.rerank, errors: edgeErrors.call, schema: { body: OPENAI_BODIES.rerank }, bodyLimit, noStore: true, ...served(ctx, calls, { format: 'rerank' }) }),
  ];
}
