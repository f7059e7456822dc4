import { Type } from '@sinclair/typebox';
import type { Json } from '../../../providers/pivot.js';
import { BLOCK } from '../schema.js';
import { positiveCount, type CallerFormat } from '../types.js';
import { chatToGenerateContent, showGeminiUsage } from './answer.js';
import { nativeGenerateContentAnswer, nativeGenerateContentReader } from './native.js';
import { generateContentToChat } from './request.js';
import { generateContentStream } from './stream.js';

/** Google's canonical status names by HTTP status (google.rpc.Code's HTTP mapping). */
const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const googleStatus = (status: number) => STATUSES[status] ?? (status >= 500 ? 'UNAVAILABLE' : 'INVALID_ARGUMENT');

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
      contents: Type.Array(Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(BLOCK) }, { additionalProperties: true }), { minItems: 1 }),
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
  relayPath: /^\/relay\/v1beta\//,
  errorBody: (e) => ({ error: { code: e.status, message: e.message, status: googleStatus(e.status) } }),
};
