import type { Json } from '../../providers/pivot.js';
import { UpstreamPayloadError } from '../../providers/types.js';

/**
 * Streams passed through when the channel speaks the caller's format (an Anthropic channel for an Anthropic
 * caller, a Gemini channel for a Gemini caller): each line goes out as it came, and is read on the way for
 * output, the proper end, usage, text and error events. An event whose usage the relay replaces (`shown`)
 * goes out re-written with the billed counts.
 */

function parse(line: string, vendor: string): unknown {
  try {
    return JSON.parse(line.slice(5));
  } catch {
    throw new UpstreamPayloadError(`${vendor} sent a stream event that is not JSON`);
  }
}

/**
 * What the readers share: the lines pass through (or the event `read` re-wrote, in its place), and an error
 * ending starts on a fresh event (after a cut inside an event, its blank line first, so the error's data is
 * not glued to the broken event's).
 */
export function passThrough(read: (data: unknown) => Json | void, errorEvent: (message: string) => string, vendor: string) {
  let open = false;
  return {
    line(line: string): string {
      const rewritten = line.startsWith('data:') && line.slice(5).trim() ? read(parse(line, vendor)) : undefined;
      open = line.trim() !== '';
      return rewritten ? `data: ${JSON.stringify(rewritten)}\n` : line + '\n';
    },
    fail: (message: string) => (open ? '\n' : '') + errorEvent(message),
  };
}
