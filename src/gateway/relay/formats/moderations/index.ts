import { Type } from '@sinclair/typebox';
import { DEFAULT_MODERATION_MODEL } from '../../../../contract/relay.js';
import { isObject, objectOf } from '../../../../kit/json/object.js';
import { payloadError } from '../../../providers/openai/relay.js';
import { UnsupportedByChannel, UpstreamPayloadError } from '../../../providers/types.js';
import { textTokens } from '../../tokens.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL } from '../schema.js';
import { showEmbeddingsUsage } from '../shown-usage.js';
import type { CallerFormat } from '../types.js';

/** The text of a moderation input: strings, or the text parts of a multi-modal list (images count nothing). */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  return input.map((x) => (typeof x === 'string' ? x : typeof objectOf(x).text === 'string' ? (objectOf(x).text as string) : '')).join('\n');
}

/**
 * OpenAI moderations (`POST /v1/moderations`): passed to the channels that serve them (OpenAI-compatible),
 * the answer unchanged. Moderation answers carry no usage: the input is counted (or the call priced per call).
 */
export const moderations: CallerFormat = {
  name: 'moderations',
  body: Type.Object(
    { model: Type.Optional(MODEL), input: Type.Union([Type.String(), Type.Array(Type.String()), Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true }))]) },
    { additionalProperties: true },
  ),
  target: ({ body }) => ({ model: body.model ?? DEFAULT_MODERATION_MODEL, stream: false }),
  missing: (body) => (body.input === undefined || body.input === '' ? 'input is required' : null),
  vendorPath: () => '/v1/moderations',
  toProvider(_p, t) {
    // Another channel of the model may serve them: a failure of this channel, not of the call.
    throw new UnsupportedByChannel(`channel type ${t.type} serves no moderations`, 'this model serves no moderations');
  },
  promptTokens: (body) => textTokens(inputText(body.input)),
  answer({ json, usage: usageOf, passed }) {
    const error = payloadError(json);
    if (error) throw error;
    const body = objectOf(json);
    if (!Array.isArray(body.results)) throw new UpstreamPayloadError('the answer has no results');
    const u = isObject(body.usage) ? body.usage : null;
    const prompt = u && typeof u.prompt_tokens === 'number' ? u.prompt_tokens : null;
    const usage = usageOf(prompt === null ? null : { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt }, '');
    return { body: passed(usage), usage };
  },
  showUsage: showEmbeddingsUsage,
  relayPath: /^\/relay\/v1\/moderations\/?$/,
  errorBody: openaiErrorBody,
};

