import { Type } from '@sinclair/typebox';
import { inputTokens, textTokens } from '../../tokens.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL, STREAM } from '../schema.js';
import { showChatUsage } from '../shown-usage.js';
import { positiveCount, type CallerFormat } from '../types.js';
import { asksUsage, chatToCompletion, completionsStream, nativeCompletionAnswer, nativeCompletionsReader } from './answer.js';
import { completionsToChat, DEFAULT_COMPLETION_MAX_TOKENS } from './request.js';

/**
 * OpenAI's legacy completions (`POST /v1/completions`, a `prompt` instead of messages): passed through to the
 * channels that speak them (OpenAI-compatible, Azure), and through chat to the others (one prompt, answered
 * as a `text_completion`, streamed as its chunks).
 */
export const completions: CallerFormat = {
  name: 'completions',
  body: Type.Object(
    {
      model: MODEL,
      prompt: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Integer()), Type.Array(Type.Array(Type.Integer()))]),
      max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
      n: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
      echo: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      suffix: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      stream: STREAM,
    },
    { additionalProperties: true },
  ),
  target: ({ body }) => ({ model: body.model, stream: body.stream === true }),
  missing: (body) => (body.prompt === undefined ? 'prompt is required' : null),
  vendorPath: () => '/v1/completions',
  toProvider: (p, t, body, model) => p.chat(t, completionsToChat(body, model), body.stream === true),
  promptTokens: (body) => inputTokens(body.prompt) + (typeof body.suffix === 'string' ? textTokens(body.suffix) : 0),
  // Without a cap the answer stops at OpenAI's default, which the hold then covers.
  output: { max: (body) => positiveCount(body.max_tokens) ?? DEFAULT_COMPLETION_MAX_TOKENS, withMax: (body, _model, n) => ({ ...body, max_tokens: n }) },
  fromChat: (c) => chatToCompletion(c),
  showUsage: showChatUsage,
  encoder: (request) => completionsStream(asksUsage(request)),
  nativeAnswer: nativeCompletionAnswer,
  nativeReader: (shown, request) => nativeCompletionsReader(shown, asksUsage(request)),
  relayPath: /^\/relay\/v1\/completions\/?$/,
  errorBody: openaiErrorBody,
};
