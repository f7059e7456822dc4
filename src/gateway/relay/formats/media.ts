import { unsupportedMedia } from '../../providers/openai/relay.js';
import type { CallerFormat } from './types.js';

/**
 * The request of a format only a provider that speaks it serves (OpenAI's media endpoints: the OpenAI-compatible
 * and Azure OpenAI channels): any other channel is refused before a request is sent, and when no channel of
 * the model serves it the caller gets relay_unsupported_endpoint.
 */
export function nativeOnly(what: string): NonNullable<CallerFormat['toProvider']> {
  return (_p, t) => {
    throw unsupportedMedia(t, what);
  };
}

/** Answers without a usage of their own to show (bytes passed through as they came). */
export const noUsageShown: CallerFormat['showUsage'] = () => {};
