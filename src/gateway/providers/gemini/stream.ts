import { randomUUID } from 'node:crypto';
import { isObject } from '../../../kit/json/object.js';
import { chatUsage, usageCount, unixNow, type ChatChunk, type ChatUsage, type FinishReason, type Json, type ToolCall } from '../pivot.js';
import { UpstreamPayloadError, type StreamDecoder } from '../types.js';

/**
 * Reading Gemini answers: the helpers the whole answer (relay.ts) and the `alt=sse` stream share, and the
 * stream decoder. Every stream event is a whole GenerateContentResponse holding the newest piece of text.
 */

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name?: string; args?: unknown };
  [k: string]: unknown;
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  responseId?: string;
}

export const randomId = (prefix: string) => prefix + randomUUID().replaceAll('-', '').slice(0, 24);

/** The answer as an object; an `error` object ({code, message, status}) throws, with `code` as the HTTP-like status. */
export function geminiPayload(json: unknown): Json {
  if (!isObject(json)) throw new UpstreamPayloadError('the Gemini answer is not a JSON object');
  if (json.error === undefined) return json;
  const error = isObject(json.error) ? json.error : {};
  const code = Number(error.code);
  const message = typeof error.message === 'string' && error.message ? error.message : 'the Gemini answer is an error';
  const status = Number.isInteger(code) && code >= 400 && code <= 599 ? code : 502;
  throw new UpstreamPayloadError(message, typeof error.status === 'string' ? error.status : null, status);
}

/** The candidates of an answer; a blocked prompt (no candidates) reads as one empty, filtered candidate. */
export function candidatesOf(response: GeminiResponse): GeminiCandidate[] {
  if (Array.isArray(response.candidates) && response.candidates.length > 0) return response.candidates;
  if (response.promptFeedback?.blockReason) return [{ index: 0, finishReason: 'PROHIBITED_CONTENT' }];
  return [];
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

export function finishReasonOf(reason: string | undefined, calledTools: boolean): FinishReason {
  if (!reason) return null;
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  return calledTools ? 'tool_calls' : 'stop';
}

/** Thoughts are billed as output, so they count in completion tokens as well as in reasoning tokens. */
export function usageOf(usage: GeminiUsageMetadata): ChatUsage {
  const thoughts = usageCount(usage.thoughtsTokenCount);
  return chatUsage(usageCount(usage.promptTokenCount), usageCount(usage.candidatesTokenCount) + thoughts, usageCount(usage.cachedContentTokenCount), thoughts);
}

export interface CandidateOutput {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
}

/** Text, thought text and function calls of a candidate's parts (other parts, such as inline images, are dropped). */
export function readParts(parts: GeminiPart[] | undefined): CandidateOutput {
  const out: CandidateOutput = { text: '', reasoning: '', toolCalls: [] };
  for (const part of parts ?? []) {
    if (part.functionCall) {
      const call = part.functionCall;
      out.toolCalls.push({
        id: call.id || randomId('call_'),
        type: 'function',
        function: { name: String(call.name ?? ''), arguments: JSON.stringify(call.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought) out.reasoning += part.text;
      else out.text += part.text;
    }
  }
  return out;
}

type ChunkChoice = ChatChunk['choices'][number];

/** What the decoder remembers of one candidate (one choice) between events. */
interface ChoiceState {
  toolCalls: number;
  finished: boolean;
}

export function geminiStreamDecoder(model: string): StreamDecoder {
  const created = unixNow();
  let id: string | null = null;
  let usage: GeminiUsageMetadata | null = null;
  let ended = false;
  const choices = new Map<number, ChoiceState>();

  const chunk = (choiceList: ChunkChoice[], extra: Partial<ChatChunk> = {}): ChatChunk => {
    id ??= randomId('chatcmpl-');
    return { id, object: 'chat.completion.chunk', created, model, choices: choiceList, ...extra };
  };

  function candidateChunks(candidate: GeminiCandidate, position: number): ChatChunk[] {
    const index = candidate.index ?? position;
    const delta: ChunkChoice['delta'] = {};
    let state = choices.get(index);
    if (!state) {
      state = { toolCalls: 0, finished: false };
      choices.set(index, state);
      delta.role = 'assistant';
    }
    const { text, reasoning, toolCalls } = readParts(candidate.content?.parts);
    if (reasoning) delta.reasoning_content = reasoning;
    if (text) delta.content = text;
    if (toolCalls.length > 0) delta.tool_calls = toolCalls.map((call) => ({ index: state.toolCalls++, ...call }));

    const out: ChatChunk[] = [];
    if (Object.keys(delta).length > 0) out.push(chunk([{ index, delta, finish_reason: null }]));
    const finish = finishReasonOf(candidate.finishReason, state.toolCalls > 0);
    if (finish && !state.finished) {
      state.finished = true;
      out.push(chunk([{ index, delta: {}, finish_reason: finish }]));
    }
    return out;
  }

  return {
    line(line) {
      if (!line.startsWith('data:')) return [];
      const data = line.slice(5).trim();
      if (!data) return [];
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw new UpstreamPayloadError('the Gemini stream sent an event that is not JSON');
      }
      const event = geminiPayload(json) as GeminiResponse;
      if (!id && event.responseId) id = event.responseId;
      if (event.usageMetadata) usage = event.usageMetadata;
      return candidatesOf(event).flatMap(candidateChunks);
    },
    end() {
      if (ended) return [];
      ended = true;
      return [chunk([], { usage: usage ? usageOf(usage) : null })];
    },
    reported: () => (usage ? usageOf(usage) : null),
  };
}
