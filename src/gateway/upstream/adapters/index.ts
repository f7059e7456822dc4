import { anthropicAdapter } from './anthropic.js';
import { azureAdapter } from './azure.js';
import { codexAdapter } from './codex.js';
import { geminiAdapter } from './gemini.js';
import { ollamaAdapter } from './ollama.js';
import { openaiAdapter } from './openai.js';
import type { ChannelAdapter } from './types.js';

export const TYPE_AZURE = 3;
export const TYPE_OLLAMA = 4;
export const TYPE_ANTHROPIC = 14;
export const TYPE_GEMINI = 24;

const BY_TYPE: Record<number, ChannelAdapter> = {
  [TYPE_AZURE]: azureAdapter,
  [TYPE_OLLAMA]: ollamaAdapter,
  [TYPE_ANTHROPIC]: anthropicAdapter,
  [TYPE_GEMINI]: geminiAdapter,
  57: codexAdapter,
};

/** The adapter of a channel type: its own family, else OpenAI-compatible. */
export function adapterFor(type: number): ChannelAdapter {
  return BY_TYPE[type] ?? openaiAdapter;
}
