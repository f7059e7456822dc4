import type { UpstreamTarget } from '../../upstream/target.js';

/** A bearer key only when the channel has one (a plain local Ollama has none). */
export function ollamaHeaders(t: UpstreamTarget): Record<string, string> {
  return t.key ? { authorization: `Bearer ${t.key}`, accept: 'application/json' } : { accept: 'application/json' };
}

/** The headers of a request with a JSON body. */
export function jsonHeaders(t: UpstreamTarget): Record<string, string> {
  return { ...ollamaHeaders(t), 'content-type': 'application/json' };
}
