import type { UpstreamClient } from '../../../kit/upstream/client.js';
import type { UpstreamTarget } from '../target.js';

/** What an adapter may use: the gateway's upstream client (address policy, deadlines, body caps). */
export interface AdapterContext {
  upstream: UpstreamClient;
}

/**
 * One upstream wire family (OpenAI-compatible, Azure OpenAI, Anthropic, Gemini, Ollama, Codex). Each knows
 * its paths, auth headers and answer shapes; the gateway's services never build upstream requests themselves.
 */
export interface ChannelAdapter {
  family: 'openai' | 'azure' | 'anthropic' | 'gemini' | 'ollama' | 'codex';
  /** The model ids the upstream offers, de-duplicated, in the upstream's order. */
  listModels(ctx: AdapterContext, t: UpstreamTarget): Promise<string[]>;
}

/** Trimmed, non-empty, first occurrence kept. */
export function uniqueIds(ids: unknown[]): string[] {
  return [...new Set(ids.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter(Boolean))];
}

/** The `data[].id` list of an OpenAI-style model list. */
export function dataIds(body: unknown): unknown[] | null {
  const data = (body as { data?: unknown })?.data;
  return Array.isArray(data) ? data.map((m) => (m as { id?: unknown })?.id) : null;
}
