/**
 * The internal form (the pivot) is OpenAI Chat Completions: every caller format is turned into a chat
 * request, every provider turns a chat request into its own wire format and its answers (whole or
 * streamed) back into chat completions and chat chunks. Bodies are plain JSON objects: fields the relay
 * does not know are passed through where the upstream speaks the same format.
 */
export type Json = Record<string, unknown>;

/** An OpenAI Chat Completions request body (`model`, `messages`, `stream`, `tools`, …). */
export type ChatBody = Json & { model: string; messages: ChatMessage[]; stream?: boolean };

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  /** Text, or OpenAI content parts ({type: 'text', text} | {type: 'image_url', image_url: {url}}). */
  content?: string | Json[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [k: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** OpenAI usage; the two detail objects only when the upstream reported them. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | null;

/** A whole `chat.completion` object. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: ChatMessage & { role: 'assistant' }; finish_reason: FinishReason }[];
  usage?: ChatUsage;
  [k: string]: unknown;
}

/** One `chat.completion.chunk`; the last one may carry `usage` with an empty `choices`. */
export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: 'assistant'; content?: string | null; reasoning_content?: string; tool_calls?: (Omit<Partial<ToolCall>, 'function'> & { index: number; function?: { name?: string; arguments?: string } })[] };
    finish_reason: FinishReason;
  }[];
  usage?: ChatUsage | null;
  [k: string]: unknown;
}

/** An OpenAI embeddings request: `input` is a string or a list of strings (token arrays pass only to OpenAI). */
export type EmbeddingsBody = Json & { model: string; input: string | string[] | number[] | number[][] };

export interface EmbeddingsResult {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** Seconds since the epoch, as `created` fields use. */
export const unixNow = () => Math.floor(Date.now() / 1000);

/** Text of a message's content (string, or the text parts of a list). */
export function contentText(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p.type === 'text' || p.type === 'input_text' || p.type === 'output_text' ? String(p.text ?? '') : '')).join('');
}

/**
 * One token count of an upstream's usage as read: an absent field is 0; anything but a whole number ≥ 0 is
 * NaN, which the relay's usage check sees (and replaces by its own count) instead of a silent 0.
 */
export function usageCount(v: unknown): number {
  if (v === undefined || v === null) return 0;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : Number.NaN;
}

/** A usage object with total filled in and the detail objects only when non-zero. */
export function chatUsage(prompt: number, completion: number, cached = 0, reasoning = 0): ChatUsage {
  const u: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached > 0) u.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
  return u;
}

/** o-series and gpt-5 models take max_completion_tokens instead of max_tokens. */
export function reasoning(model: string) {
  return /^(o\d|gpt-5)/i.test(model);
}
