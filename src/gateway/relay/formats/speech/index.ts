import { Type } from '@sinclair/typebox';
import { textTokens } from '../../tokens.js';
import { nativeOnly, noUsageShown } from '../media.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL } from '../schema.js';
import type { CallerFormat } from '../types.js';

/**
 * OpenAI text to speech (`POST /v1/audio/speech`): passed to the upstream as sent (the model mapped); the
 * audio goes back as it comes, in the upstream's content type. Billed by the request, as the reference
 * counts it: the input's tokens for a GPT model (gpt-4o-mini-tts), its characters for others (tts-1).
 */
export const speech: CallerFormat = {
  name: 'speech',
  body: Type.Object({ model: MODEL, input: Type.String() }, { additionalProperties: true }),
  target: ({ body }) => ({ model: body.model, stream: false }),
  missing(body) {
    if (typeof body.input !== 'string') return 'input is required';
    return body.stream_format === 'sse' ? 'speech as server-sent events is not served: leave stream_format out' : null;
  },
  vendorPath: () => '/v1/audio/speech',
  toProvider: nativeOnly('speech'),
  promptTokens(body) {
    const input = typeof body.input === 'string' ? body.input : '';
    return String(body.model).includes('gpt') ? textTokens(input) : [...input].length;
  },
  bytes: { streamed: true },
  showUsage: noUsageShown,
  relayPath: /^\/relay\/v1\/audio\/speech\/?$/,
  errorBody: openaiErrorBody,
};
