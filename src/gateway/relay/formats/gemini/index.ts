import { Type } from '@sinclair/typebox';
import { googleErrorBody } from '../../../../contract/wire-errors.js';
import type { Json } from '../../../providers/pivot.js';
import { BLOCK } from '../schema.js';
import { isObject, objectOf } from '../../../../kit/json/object.js';
import { positiveCount, positiveOrZero, type CallerFormat } from '../types.js';
import { chatToGenerateContent, showGeminiUsage } from './answer.js';
import { nativeGenerateContentAnswer, nativeGenerateContentReader } from './native.js';
import { generateContentToChat } from './request.js';
import { generateContentStream } from './stream.js';

const generationConfig = (body: Json) => body.generationConfig as Json | undefined;

/**
 * Gemini's generateContent (`POST /v1beta/models/{model}:generateContent`, and
 * `:streamGenerateContent?alt=sse`): the model and the stream are named in the path. Gemini channels take
 * it as it is.
 */
export const gemini: CallerFormat = {
  name: 'gemini',
  body: Type.Object(
    {
      // Optional for countTokens, whose body may hold a generateContentRequest instead; a call needs them (toChat).
      contents: Type.Optional(Type.Array(Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(BLOCK) }, { additionalProperties: true }), { minItems: 1 })),
      generateContentRequest: Type.Optional(BLOCK),
      systemInstruction: Type.Optional(BLOCK),
      tools: Type.Optional(Type.Array(BLOCK)),
      toolConfig: Type.Optional(BLOCK),
      generationConfig: Type.Optional(BLOCK),
    },
    { additionalProperties: true },
  ),
  target: ({ modelInPath }) => ({ model: modelInPath?.model, stream: modelInPath?.stream === true }),
  vendorPath: (model, stream) => `/v1beta/models/${model}:${stream ? 'streamGenerateContent' : 'generateContent'}`,
  toChat: (body, model, stream) => generateContentToChat(body, model, stream),
  output: {
    max: (body) => positiveCount(generationConfig(body)?.maxOutputTokens),
    withMax: (body, _model, n) => ({ ...body, generationConfig: { ...(generationConfig(body) ?? {}), maxOutputTokens: n } }),
  },
  fromChat: (c) => chatToGenerateContent(c),
  showUsage: showGeminiUsage,
  encoder: (_request, model) => generateContentStream(model),
  nativeAnswer: nativeGenerateContentAnswer,
  nativeReader: nativeGenerateContentReader,
  count: {
    call: (body) => (isObject(body.generateContentRequest) ? body.generateContentRequest : body),
    read: (json) => positiveOrZero(objectOf(json).totalTokens),
    answer: (tokens) => ({ totalTokens: tokens }),
  },
  relayPath: /^\/relay\/v1beta\//,
  errorBody: (e) => googleErrorBody(e.status, e.message),
};
