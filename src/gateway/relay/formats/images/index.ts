import { Type } from '@sinclair/typebox';
import { objectOf } from '../../../../kit/json/object.js';
import { chatUsage, type ChatUsage, type Json } from '../../../providers/pivot.js';
import { payloadError } from '../../../providers/openai/relay.js';
import { UpstreamPayloadError } from '../../../providers/types.js';
import { textTokens } from '../../tokens.js';
import { nativeOnly } from '../media.js';
import { openaiErrorBody } from '../openai-error.js';
import { MODEL } from '../schema.js';
import { merge } from '../shown-usage.js';
import type { CallerFormat } from '../types.js';

/** The most images one call may ask for (the reference's MaxImageN): n multiplies the price. */
export const MAX_IMAGES = 128;

/**
 * The reference's price ratio of a DALL·E image's size and quality (its ImageRequest's ImagePriceRatio): 256²
 * 0.4, 512² 0.45, 1024² 1, 1024×1792 either way 2; DALL·E 3 in hd twice that (1.5 times for the tall and wide
 * sizes). Other models 1.
 */
export function dalleRatio(model: string, size: unknown, quality: unknown): number {
  if (!model.startsWith('dall-e')) return 1;
  const tallOrWide = size === '1024x1792' || size === '1792x1024';
  const sizeRatio = size === '256x256' ? 0.4 : size === '512x512' ? 0.45 : tallOrWide ? 2 : 1;
  const qualityRatio = model === 'dall-e-3' && quality === 'hd' ? (tallOrWide ? 1.5 : 2) : 1;
  return sizeRatio * qualityRatio;
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_IMAGES ? v : null);

/** gpt-image-1's usage (input_tokens, output_tokens) in chat terms; null when the answer has none (DALL·E). */
function imagesUsage(json: unknown): ChatUsage | null {
  const u = objectOf(objectOf(json).usage);
  const input = u.input_tokens;
  const output = u.output_tokens;
  return typeof input === 'number' || typeof output === 'number' ? chatUsage(Number(input ?? 0), Number(output ?? 0)) : null;
}

/**
 * OpenAI image generation (`POST /v1/images/generations`): passed to the upstream as sent (the model
 * mapped) and answered as it came (`data[].url` or `b64_json`). A per-call price is paid per image, times
 * DALL·E's size ratio, as the reference bills it; a token price from the usage gpt-image-1 reports (else the
 * prompt counted). Never streamed.
 */
export const images: CallerFormat = {
  name: 'images',
  body: Type.Object({ model: MODEL, prompt: Type.String(), n: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_IMAGES })) }, { additionalProperties: true }),
  target: ({ body }) => ({ model: body.model, stream: false }),
  missing(body) {
    if (typeof body.prompt !== 'string') return 'prompt is required';
    if (body.n !== undefined && count(body.n) === null) return `n must be a whole number from 1 to ${MAX_IMAGES}`;
    return body.stream === true ? 'streamed image generation is not served: leave stream out' : null;
  },
  vendorPath: () => '/v1/images/generations',
  toProvider: nativeOnly('image generation'),
  promptTokens: (body) => textTokens(typeof body.prompt === 'string' ? body.prompt : ''),
  uncappedOutput: true,
  priceUnits(request, answer) {
    // The images the upstream made, when it says (the reference's data count), else those asked for.
    const data = objectOf(answer).data;
    const n = (Array.isArray(data) ? count(data.length) : null) ?? count(request.n) ?? 1;
    return n * dalleRatio(String(request.model), request.size, request.quality);
  },
  answer({ json, usage: usageOf, passed }) {
    const err = payloadError(json);
    if (err) throw err;
    if (!Array.isArray(objectOf(json).data)) throw new UpstreamPayloadError('the answer has no data');
    const usage = usageOf(imagesUsage(json), '');
    return { body: passed(usage), usage };
  },
  showUsage(answer: Json, u) {
    merge(answer, 'usage', { input_tokens: u.prompt_tokens, output_tokens: u.completion_tokens, total_tokens: u.total_tokens });
  },
  relayPath: /^\/relay\/v1\/images\/generations\/?$/,
  errorBody: openaiErrorBody,
};
