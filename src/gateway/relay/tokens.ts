import { createRequire } from 'node:module';
import { contentText, type ChatBody } from '../providers/pivot.js';

const require = createRequire(import.meta.url);
let tokenizer: typeof import('gpt-tokenizer') | undefined;
/** gpt-tokenizer, loaded on the first count: building its tables takes a few hundred ms that start-up skips. */
const countTokens = (text: string) => (tokenizer ??= require('gpt-tokenizer') as typeof import('gpt-tokenizer')).countTokens(text);

/**
 * Token counts for calls whose upstream reported no usage, with OpenAI's o200k_base tokenizer
 * (gpt-tokenizer) and OpenAI's chat framing: 3 tokens per message, 1 more for a name, 3 to prime the answer.
 * Other families' tokenizers differ; the count is the reference's fallback, not their exact number.
 */
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;

/**
 * Text is counted in slices: byte-pair merging of one long unbroken run of characters costs the square of
 * its length (a 20 MB answer without spaces would hold the event loop for minutes). A cut inside a word
 * adds at most a token per slice (0.05 %).
 */
const SLICE = 2048;

export function textTokens(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += SLICE) n += countTokens(text.slice(i, i + SLICE));
  return n;
}

export function promptTokens(body: ChatBody): number {
  let n = REPLY_PRIMING;
  for (const m of body.messages) {
    n += PER_MESSAGE + textTokens(contentText(m.content ?? ''));
    if (m.name) n += PER_NAME + textTokens(m.name);
    if (m.tool_calls) n += textTokens(JSON.stringify(m.tool_calls));
  }
  if (Array.isArray(body.tools) && body.tools.length) n += textTokens(JSON.stringify(body.tools));
  return n;
}

/** Prompt tokens of an embeddings input (strings, or token arrays counted by length). */
export function inputTokens(input: unknown): number {
  if (typeof input === 'string') return textTokens(input);
  if (!Array.isArray(input)) return 0;
  if (input.every((x) => typeof x === 'number')) return input.length;
  return input.reduce((n: number, x) => n + inputTokens(x), 0);
}
