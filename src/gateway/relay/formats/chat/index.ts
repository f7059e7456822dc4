import { Type } from '@sinclair/typebox';
import { reasoning, type Json } from '../../../providers/pivot.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL, STREAM } from '../schema.js';
import { showChatUsage } from '../shown-usage.js';
import type { ChunkEncoder } from '../stream-reader.js';
import { positiveCount, type CallerFormat } from '../types.js';

/** OpenAI Chat Completions SSE. The usage-only chunk goes out only when the caller asked for it. */
export function chatEncoder(includeUsage: boolean): ChunkEncoder {
  return {
    chunk(c, raw) {
      if (!includeUsage && c.choices.length === 0 && c.usage) return '';
      return `data: ${raw ?? JSON.stringify(c)}\n\n`;
    },
    end: () => 'data: [DONE]\n\n',
    // What OpenAI itself sends when a stream fails: a data event holding an error object (the SDKs raise it).
    error: (message, code) => `data: ${JSON.stringify({ error: { message, type: 'upstream_error', code } })}\n\n`,
  };
}

const CAP_FIELDS = ['max_tokens', 'max_completion_tokens'] as const;

/** OpenAI Chat Completions (`POST /v1/chat/completions`): the internal form itself. */
export const chat: CallerFormat = {
  name: 'chat',
  body: Type.Object({ model: MODEL, messages: Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), { minItems: 1 }), stream: STREAM }, { additionalProperties: true }),
  target: ({ body }) => ({ model: body.model, stream: body.stream === true }),
  missing: (body) => (!Array.isArray(body.messages) || body.messages.length === 0 ? 'messages must be a non-empty list' : null),
  vendorPath: () => '/v1/chat/completions',
  output: {
    max(body) {
      const caps = [positiveCount(body.max_completion_tokens), positiveCount(body.max_tokens)].filter((n): n is number => n !== null);
      return caps.length ? Math.min(...caps) : null;
    },
    withMax(body, model, n) {
      const out: Json = { ...body };
      const fields: (typeof CAP_FIELDS)[number][] = CAP_FIELDS.filter((f) => body[f] !== undefined);
      if (!fields.length) fields.push(reasoning(model) ? 'max_completion_tokens' : 'max_tokens');
      for (const f of fields) out[f] = n;
      return out;
    },
  },
  showUsage: showChatUsage,
  // Whether the caller asked the stream for its usage chunk.
  encoder: (request) => chatEncoder((request.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true),
  relayPath: /^\/relay\/v1\/chat\/completions\/?$/,
  errorBody: openaiErrorBody,
};
