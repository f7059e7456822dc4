import { TYPE_ANTHROPIC, TYPE_AZURE, TYPE_GEMINI, TYPE_OLLAMA } from '../../upstream/adapters/index.js';
import { anthropicDialect } from './anthropic.js';
import { geminiDialect } from './gemini.js';
import { ollamaDialect } from './ollama.js';
import { azureDialect, openaiDialect } from './openai.js';
import type { Dialect } from './types.js';

const BY_TYPE: Record<number, Dialect> = {
  [TYPE_AZURE]: azureDialect,
  [TYPE_OLLAMA]: ollamaDialect,
  [TYPE_ANTHROPIC]: anthropicDialect,
  [TYPE_GEMINI]: geminiDialect,
};

/** The data-plane wire family of a channel type: its own, else OpenAI-compatible. */
export function dialectFor(type: number): Dialect {
  return BY_TYPE[type] ?? openaiDialect;
}
