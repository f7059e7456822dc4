import { Type } from '@sinclair/typebox';
import { parseJson } from '../../../../kit/upstream/client.js';
import { objectOf } from '../../../../kit/json/object.js';
import { chatUsage, type ChatUsage } from '../../../providers/pivot.js';
import { payloadError } from '../../../providers/openai/relay.js';
import { nativeOnly, noUsageShown } from '../media.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL } from '../schema.js';
import type { CallerFormat } from '../types.js';

/** The reference's audio tokens: 1,000 a minute, whole seconds rounded up. */
export const audioTokens = (seconds: number) => Math.round((Math.ceil(seconds) / 60) * 1000);

/**
 * What a transcription's upstream reported: tokens (gpt-4o-transcribe's input_tokens and output_tokens) or
 * the audio's duration (whisper-1's `{type: "duration", seconds}`, as audio tokens of the prompt).
 */
function reportedUsage(json: unknown): ChatUsage | null {
  const u = objectOf(objectOf(json).usage);
  if (typeof u.input_tokens === 'number' || typeof u.output_tokens === 'number') return chatUsage(Number(u.input_tokens ?? 0), Number(u.output_tokens ?? 0));
  if (u.type === 'duration' && typeof u.seconds === 'number' && Number.isFinite(u.seconds) && u.seconds >= 0) return chatUsage(audioTokens(u.seconds), 0);
  return null;
}

/** The uploaded file, as the body schema of the routes that take one declares it. */
const FILE = Type.Unsafe<unknown>({ contentMediaType: 'application/octet-stream', description: 'The audio file (mp3, mp4, mpeg, mpga, m4a, wav or webm), sent upstream unchanged' });

/**
 * OpenAI transcription (`POST /v1/audio/transcriptions`, multipart/form-data): the form goes upstream with
 * the file's bytes unchanged (the model mapped), the answer back as it came (json, text, srt, verbose_json,
 * vtt). Billed by the usage the upstream reports, else by the answer's text counted. Never streamed.
 */
export const transcriptions: CallerFormat = {
  name: 'transcriptions',
  body: Type.Object({ model: MODEL, file: FILE }, { additionalProperties: true }),
  target: ({ body }) => ({ model: body.model, stream: false }),
  missing: (body) => (body.stream === true || body.stream === 'true' ? 'streamed transcription is not served: leave stream out' : null),
  vendorPath: () => '/v1/audio/transcriptions',
  toProvider: nativeOnly('transcription'),
  // The audio is not read: what it holds is known from the upstream's usage (or the text it gave).
  promptTokens: () => 0,
  uncappedOutput: true,
  bytes: {
    streamed: false,
    read(text, contentType) {
      if (!/json/i.test(contentType)) return { usage: null, text };
      const json = parseJson(text);
      const err = payloadError(json);
      if (err) throw err;
      const said = objectOf(json).text;
      return { usage: reportedUsage(json), text: typeof said === 'string' ? said : text };
    },
  },
  showUsage: noUsageShown,
  relayPath: /^\/relay\/v1\/audio\/transcriptions\/?$/,
  errorBody: openaiErrorBody,
};
