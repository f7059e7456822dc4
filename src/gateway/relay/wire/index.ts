import { TYPE_ANTHROPIC, TYPE_AZURE, TYPE_GEMINI, TYPE_OLLAMA } from '../../upstream/adapters/index.js';
import { anthropicDialect } from './anthropic.js';
import { geminiDialect } from './gemini.js';
import { ollamaDialect } from './ollama.js';
import { azureDialect, openaiDialect } from './openai.js';
import type { Dialect } from './types.js';

/**
 * Channel types that take OpenAI's requests as they are at `{base_url}/v1/chat/completions` (and
 * `/v1/embeddings`) with a Bearer key: those the reference serves with its plain OpenAI adaptor (OpenAI,
 * OpenAIMax, OhMyGPT, AILS, AIProxy, API2GPT, AIGC2D, 360, OpenRouter, FastGPT, LingYiWanWu, Xinference) and
 * the vendors whose own adaptor sends the same request there (Moonshot, SiliconFlow, Mistral, DeepSeek, xAI).
 * Not Custom (8): its base URL is the whole request URL. Every other type speaks another protocol.
 */
const OPENAI_COMPATIBLE = [1, 6, 7, 9, 10, 12, 13, 19, 20, 22, 25, 31, 40, 42, 43, 47, 48];

const BY_TYPE: Record<number, Dialect> = {
  ...Object.fromEntries(OPENAI_COMPATIBLE.map((type) => [type, openaiDialect])),
  [TYPE_AZURE]: azureDialect,
  [TYPE_OLLAMA]: ollamaDialect,
  [TYPE_ANTHROPIC]: anthropicDialect,
  [TYPE_GEMINI]: geminiDialect,
};

/** The data-plane wire family of a channel type; null for a type the relay cannot speak (never sent a request). */
export function dialectFor(type: number): Dialect | null {
  return BY_TYPE[type] ?? null;
}
