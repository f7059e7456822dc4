import { anthropic } from './anthropic/index.js';
import { azure } from './azure/index.js';
import { codex } from './codex/index.js';
import { gemini } from './gemini/index.js';
import { jina } from './jina/index.js';
import { ollama } from './ollama/index.js';
import { openai } from './openai/index.js';
import type { BalanceReader, Provider, RelayProvider } from './types.js';

/** Every provider; a channel type belongs to at most one. */
export const PROVIDERS: readonly Provider[] = [openai, azure, ollama, anthropic, gemini, codex, jina];

const BY_TYPE = new Map<number, Provider>(PROVIDERS.flatMap((p) => p.channelTypes.map((type) => [type, p] as const)));

/**
 * Channel types no provider serves are listed and tested the OpenAI way (many vendors answer
 * OpenAI's requests), but the relay sends them no calls: Custom (8), whose base URL is the whole request
 * URL, and every type that speaks another protocol.
 */
const FALLBACK = openai;

/**
 * Types no provider serves that have no test: asynchronous task APIs (Midjourney, Suno, Kling, Jimeng, Vidu, DoubaoVideo, Sora),
 * and wire protocols no provider speaks (PaLM, Baidu v1, Zhipu v3, Xunfei, AIProxyLibrary, Tencent, AWS,
 * Cohere, Dify, Cloudflare, VertexAI, Coze, Replicate): an OpenAI-style request would test nothing real.
 */
const UNTESTABLE = new Set([2, 5, 36, 50, 51, 52, 54, 55, 11, 15, 16, 18, 21, 23, 33, 34, 37, 39, 41, 49, 56]);

const BALANCES = new Map<number, BalanceReader>(PROVIDERS.flatMap((p) => Object.entries(p.balances ?? {}).map(([type, reader]) => [Number(type), reader] as const)));

/** The provider of a channel type on the control plane (model lists, tests): its own, else the OpenAI-compatible one. */
export function providerOf(type: number): Provider {
  return BY_TYPE.get(type) ?? FALLBACK;
}

/** The provider the relay sends a channel type's calls to; null for a type it cannot speak (never sent a request). */
export function relayProviderOf(type: number): RelayProvider | null {
  const p = BY_TYPE.get(type);
  return p?.relay ? (p as RelayProvider) : null;
}

/** Whether a channel test of the type means anything: a provider's own type, or one an OpenAI-style request can test. */
export function testable(type: number): boolean {
  return BY_TYPE.has(type) || !UNTESTABLE.has(type);
}

/** How a channel type's balance is read; null for types without a balance query. */
export function balanceReaderOf(type: number): BalanceReader | null {
  return BALANCES.get(type) ?? null;
}

/** The channel types whose balance can be read. */
export function balanceTypes(): number[] {
  return [...BALANCES.keys()];
}
