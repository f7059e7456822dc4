import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement, type AnswerDoc } from '../../contract/types.js';
import { ImagesResponse, Transcription } from '../../contract/wire-schemas.js';
import { AppError } from '../../kit/http/errors.js';
import { splitForm } from '../../kit/http/multipart.js';
import type { EdgeContext } from '../context.js';
import { answerCall } from '../calls/answer.js';
import type { SyncCalls } from '../calls/service.js';
import { edgeErrors } from '../schemas.js';

const MODEL = Type.String({ minLength: 1, maxLength: 128 });
const open = { additionalProperties: true };

/** The fields the edge reads of OpenAI's media bodies; the rest goes to the gateway relay as sent. */
const BODIES = {
  images: Type.Object({ model: MODEL, prompt: Type.String(), n: Type.Optional(Type.Integer({ minimum: 1, maximum: 128 })) }, open),
  speech: Type.Object({ model: MODEL, input: Type.String() }, open),
  transcriptions: Type.Object({ model: MODEL, file: Type.Unsafe<unknown>({ contentMediaType: 'application/octet-stream', description: 'The audio file, sent upstream unchanged' }) }, open),
};

/** A transcription's form as the relay takes it: its text fields as the body, its files apart; `file` must be one. */
function formOf(req: FastifyRequest) {
  const { fields, files } = splitForm(req.body as Record<string, unknown>);
  if (!files.some((f) => f.field === 'file')) throw new AppError('invalid_request_body', { params: { detail: 'file must be an uploaded file (multipart/form-data)', field: 'file' } });
  req.body = fields;
  return files;
}

/** E15–E17: OpenAI's image generation, speech and transcription endpoints, with the same keys and wallets as chat. */
export function mediaRoutes(ctx: EdgeContext, calls: SyncCalls) {
  const bodyLimit = ctx?.config.edge.runs.maxRequestBytes;
  const jsonCall = (id: string, format: 'images' | 'speech', answer: AnswerDoc) =>
    implement(id, { answers: { 200: answer }, errors: edgeErrors.call, schema: { body: BODIES[format] }, bodyLimit, noStore: true, handler: (req, reply) => answerCall(ctx, calls, { format }, req, reply) });
  return [
    jsonCall('E15', 'images', { description: 'The images (data[].url or b64_json), as the upstream answered', schema: ImagesResponse }),
    jsonCall('E16', 'speech', { description: "The audio, in the upstream's bytes and content type (audio/mpeg for mp3)", media: ['audio/*'] }),
    implement('E17', {
      answers: { 200: { description: 'The transcription as the upstream answered it: JSON (json, verbose_json), or text (text, srt, vtt)', schema: Transcription, media: ['text/plain', 'text/vtt'] } },
      errors: edgeErrors.call,
      schema: { body: BODIES.transcriptions },
      bodyLimit: ctx?.config.edge.runs.maxUploadBytes,
      multipart: true,
      noStore: true,
      handler: (req, reply) => answerCall(ctx, calls, { format: 'transcriptions', files: formOf(req) }, req, reply),
    }),
  ];
}
