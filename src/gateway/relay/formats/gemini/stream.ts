import type { ChatChunk, ChatUsage, FinishReason, Json } from '../../../providers/pivot.js';
import { functionCallPart, geminiFinishReason, responseIdOf, usageMetadataOf } from './answer.js';

/** Writes chat chunks as Gemini's `alt=sse` stream; each method returns the text to send (possibly empty). */
export interface GenerateContentStreamEncoder {
  chunk(c: ChatChunk): string;
  /** The upstream finished: the last event, with each candidate's finishReason (and its calls) and usageMetadata. */
  end(): string;
  /** The upstream failed after output began: an `error` event as Google's API sends mid-stream, then nothing. */
  error(message: string, code: string): string;
}

/** The status the relay answers a stream that broke off with (relay_stream_interrupted), and its Google name. */
const INTERRUPTED = { code: 502, status: 'UNAVAILABLE' };

export const geminiEvent = (data: Json): string => `data: ${JSON.stringify(data)}\n\n`;

export const geminiErrorEvent = (message: string): string => geminiEvent({ error: { code: INTERRUPTED.code, message, status: INTERRUPTED.status } });

interface CallState {
  id: string;
  name: string;
  arguments: string;
}

interface CandidateState {
  finish: FinishReason;
  /** Gemini sends whole function calls: the chat deltas of each call are put together until the end. */
  calls: Map<number, CallState>;
}

/**
 * Every event is a GenerateContentResponse holding the newest text (or thought text) of each candidate.
 * Function calls go out whole in the last event, which also carries the finish reasons and the usage (a
 * chat stream gives them at its end).
 */
export function generateContentStream(model: string): GenerateContentStreamEncoder {
  let responseId: string | null = null;
  let finished = false;
  let usage: ChatUsage | null = null;
  const candidates = new Map<number, CandidateState>();

  const candidateOf = (index: number): CandidateState => {
    let state = candidates.get(index);
    if (!state) candidates.set(index, (state = { finish: null, calls: new Map() }));
    return state;
  };

  const response = (list: Json[], extra: Json = {}): Json => {
    responseId ??= responseIdOf(undefined);
    return { candidates: list, ...extra, modelVersion: model, responseId };
  };

  function addCalls(state: CandidateState, deltas: NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>): void {
    for (const [position, delta] of deltas.entries()) {
      const index = typeof delta.index === 'number' ? delta.index : position;
      let call = state.calls.get(index);
      if (!call) state.calls.set(index, (call = { id: delta.id ?? '', name: '', arguments: '' }));
      if (delta.id && !call.id) call.id = delta.id;
      if (delta.function?.name) call.name += delta.function.name;
      if (delta.function?.arguments) call.arguments += delta.function.arguments;
    }
  }

  return {
    chunk(c) {
      if (finished) return '';
      if (responseId === null && c.id) responseId = responseIdOf(c.id);
      if (c.usage) usage = c.usage;
      const list: Json[] = [];
      for (const choice of c.choices ?? []) {
        const state = candidateOf(choice.index ?? 0);
        const d = choice.delta ?? {};
        if (d.tool_calls?.length) addCalls(state, d.tool_calls);
        if (choice.finish_reason) state.finish = choice.finish_reason;
        const parts: Json[] = [];
        if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
        if (d.content) parts.push({ text: d.content });
        if (parts.length) list.push({ content: { parts, role: 'model' }, index: choice.index ?? 0 });
      }
      return list.length ? geminiEvent(response(list)) : '';
    },

    end() {
      if (finished) return '';
      finished = true;
      if (candidates.size === 0) candidateOf(0);
      const list = [...candidates].map(([index, state]) => {
        const calls = [...state.calls.values()].map(functionCallPart);
        return { content: { parts: calls.length ? calls : [{ text: '' }], role: 'model' }, finishReason: geminiFinishReason(state.finish), index };
      });
      return geminiEvent(response(list, usage ? { usageMetadata: usageMetadataOf(usage) } : {}));
    },

    error(message) {
      if (finished) return '';
      finished = true;
      return geminiErrorEvent(message);
    },
  };
}
