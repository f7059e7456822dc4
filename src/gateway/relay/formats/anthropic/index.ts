import { Type } from '@sinclair/typebox';
import { BLOCK, MODEL, STREAM, TYPED } from '../schema.js';
import { positiveCount, type CallerFormat } from '../types.js';
import { chatToMessages, showMessagesUsage } from './answer.js';
import { nativeMessagesAnswer, nativeMessagesReader } from './native.js';
import { messagesToChat } from './request.js';
import { messagesStream } from './stream.js';

/** Anthropic's error types by HTTP status (its API's documented list); other statuses take the nearest. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export const anthropicErrorType = (status: number) => ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

/** The Anthropic Messages API (`POST /v1/messages`, what Claude clients send); Anthropic channels take it as it is. */
export const anthropic: CallerFormat = {
  name: 'anthropic',
  body: Type.Object(
    {
      model: MODEL,
      messages: Type.Array(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]), content: Type.Union([Type.String(), Type.Array(TYPED)]) }, { additionalProperties: true }), { minItems: 1 }),
      system: Type.Optional(Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String(), text: Type.String() }, { additionalProperties: true }))])),
      max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
      stop_sequences: Type.Optional(Type.Array(Type.String())),
      temperature: Type.Optional(Type.Number()),
      top_p: Type.Optional(Type.Number()),
      top_k: Type.Optional(Type.Integer({ minimum: 0 })),
      tools: Type.Optional(Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true }))),
      tool_choice: Type.Optional(TYPED),
      thinking: Type.Optional(TYPED),
      metadata: Type.Optional(BLOCK),
      stream: STREAM,
    },
    { additionalProperties: true },
  ),
  target: ({ body }) => ({ model: body.model, stream: body.stream === true }),
  vendorPath: () => '/v1/messages',
  toChat: (body) => messagesToChat(body),
  output: { max: (body) => positiveCount(body.max_tokens), withMax: (body, _model, n) => ({ ...body, max_tokens: n }) },
  fromChat: (c) => chatToMessages(c),
  showUsage: (answer, u) => showMessagesUsage(answer, u),
  encoder: (_request, model) => messagesStream(model),
  nativeAnswer: nativeMessagesAnswer,
  nativeReader: nativeMessagesReader,
  relayPath: /^\/relay\/v1\/messages\/?$/,
  errorBody: (e) => ({ type: 'error', error: { type: anthropicErrorType(e.status), message: e.message }, request_id: e.requestId }),
};
