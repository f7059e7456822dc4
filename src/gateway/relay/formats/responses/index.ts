import { Type } from '@sinclair/typebox';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL, STREAM } from '../schema.js';
import { positiveCount, type CallerFormat } from '../types.js';
import { chatToResponse, showResponsesUsage } from './answer.js';
import { nativeResponsesAnswer, nativeResponsesReader } from './native.js';
import { responsesToChat } from './request.js';
import { responsesStream } from './stream.js';

/** The OpenAI Responses API (`POST /v1/responses`); OpenAI and Azure channels take it as it is. */
export const responses: CallerFormat = {
  name: 'responses',
  body: Type.Object({ model: MODEL, input: Type.Union([Type.String(), Type.Array(Type.Object({}, { additionalProperties: true }))]), stream: STREAM }, { additionalProperties: true }),
  target: ({ body }) => ({ model: body.model, stream: body.stream === true }),
  missing: (body) => (body.input === undefined ? 'input is required' : null),
  vendorPath: () => '/v1/responses',
  toChat: (body) => responsesToChat(body),
  output: { max: (body) => positiveCount(body.max_output_tokens), withMax: (body, _model, n) => ({ ...body, max_output_tokens: n }) },
  fromChat: (c, request) => chatToResponse(c, request),
  showUsage: showResponsesUsage,
  encoder: (request, model) => responsesStream(request, model),
  nativeAnswer: nativeResponsesAnswer,
  nativeReader: nativeResponsesReader,
  relayPath: /^\/relay\/v1\/responses\/?$/,
  errorBody: openaiErrorBody,
};
