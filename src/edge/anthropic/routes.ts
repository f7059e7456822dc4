import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AnthropicMessage, AnthropicTokenCount } from '../../contract/wire-schemas.js';
import { answerCall, countCall } from '../calls/answer.js';
import type { SyncCalls } from '../calls/service.js';
import type { EdgeContext } from '../context.js';
import { edgeErrors } from '../schemas.js';

const MODEL = Type.String({ minLength: 1, maxLength: 128 });
const MESSAGES = Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), { minItems: 1 });

/** The fields of an Anthropic Messages body the edge reads; the rest goes to the gateway relay as sent. */
export const ANTHROPIC_BODIES = {
  messages: Type.Object({ model: MODEL, messages: MESSAGES, stream: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
  count: Type.Object({ model: MODEL, messages: MESSAGES }, { additionalProperties: true }),
};

/**
 * E07, E08: Anthropic's Messages API (what Claude Code and the Anthropic SDKs send, `?beta=true` included),
 * with the same keys in `x-api-key` or `Authorization: Bearer`, billed as every call; errors in
 * Anthropic's shape (wire-errors.ts).
 */
export function anthropicRoutes(ctx: EdgeContext, calls: SyncCalls) {
  const bodyLimit = ctx?.config.edge.runs.maxRequestBytes;
  return [
    implement('E07', {
      answers: { 200: { description: "The message, or Anthropic's server-sent events when streamed", schema: AnthropicMessage, stream: true } },
      errors: edgeErrors.call,
      schema: { body: ANTHROPIC_BODIES.messages },
      bodyLimit,
      noStore: true,
      handler: (req, reply) => answerCall(ctx, calls, { format: 'anthropic' }, req, reply),
    }),
    implement('E08', {
      answers: { 200: { description: "The prompt's tokens: an Anthropic channel's own count, else the relay tokenizer's estimate", schema: AnthropicTokenCount } },
      errors: edgeErrors.count,
      schema: { body: ANTHROPIC_BODIES.count },
      bodyLimit,
      noStore: true,
      handler: async (req, reply) => ({ input_tokens: await countCall(ctx, calls, { format: 'anthropic' }, req, reply) }),
    }),
  ];
}
