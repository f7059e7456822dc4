import { Type } from '@sinclair/typebox';
import { anthropicErrorBody } from '../../../../contract/wire-errors.js';
import { BLOCK, MODEL, STREAM, TYPED } from '../schema.js';
import { objectOf } from '../../../../kit/json/object.js';
import { positiveCount, positiveOrZero, type CallerFormat } from '../types.js';
import { chatToMessages, showMessagesUsage } from './answer.js';
import { nativeMessagesAnswer, nativeMessagesReader } from './native.js';
import { foldSystemMessages, messagesToChat } from './request.js';
import { messagesStream } from './stream.js';

/** The Anthropic Messages API (`POST /v1/messages`, what Claude clients send); Anthropic channels take it as it is. */
export const anthropic: CallerFormat = {
  name: 'anthropic',
  body: Type.Object(
    {
      model: MODEL,
      messages: Type.Array(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]), content: Type.Union([Type.String(), Type.Array(TYPED)]) }, { additionalProperties: true }), { minItems: 1 }),
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
  canonical: foldSystemMessages,
  toChat: (body) => messagesToChat(body),
  output: { max: (body) => positiveCount(body.max_tokens), withMax: (body, _model, n) => ({ ...body, max_tokens: n }) },
  fromChat: (c) => chatToMessages(c),
  showUsage: (answer, u) => showMessagesUsage(answer, u),
  encoder: (_request, model) => messagesStream(model),
  nativeAnswer: nativeMessagesAnswer,
  nativeReader: nativeMessagesReader,
  count: {
    call: (body) => body,
    read: (json) => positiveOrZero(objectOf(json).input_tokens),
    answer: (tokens) => ({ input_tokens: tokens }),
  },
  relayPath: /^\/relay\/v1\/messages(\/count_tokens)?\/?$/,
  errorBody: (e) => anthropicErrorBody(e.status, e.message, e.requestId),
};
