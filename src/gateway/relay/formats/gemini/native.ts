import { isObject, stringOf } from '../../../../kit/json/object.js';
import { geminiPayload, usageOf, type GeminiResponse } from '../../../providers/gemini/stream.js';
import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { passThrough } from '../native-stream.js';
import { upstreamUsageShown, type UsageShown } from '../shown-usage.js';
import type { StreamReader } from '../stream-reader.js';
import { showGeminiUsage } from './answer.js';
import { geminiErrorEvent } from './stream.js';

/** The answers of a Gemini channel to a Gemini caller, passed through and read for usage, text and errors. */

/** The text of a GenerateContentResponse (thoughts and function calls included), for counting. */
export function generateContentText(response: GeminiResponse): string {
  return (response.candidates ?? [])
    .flatMap((candidate) => candidate.content?.parts ?? [])
    .map((part) => stringOf(part.text) + (part.functionCall ? stringOf(part.functionCall.name) + JSON.stringify(part.functionCall.args ?? {}) : ''))
    .join('');
}

/** Usage and text of a native answer; an error body throws (retried elsewhere). */
export function nativeGenerateContentAnswer(json: unknown): { usage: ChatUsage | null; text: string } {
  const response = geminiPayload(json) as GeminiResponse;
  return { usage: response.usageMetadata ? usageOf(response.usageMetadata) : null, text: generateContentText(response) };
}

/** Gemini's `alt=sse` stream: every event a GenerateContentResponse; a finishReason (or a blocked prompt) ends it. */
export function nativeGenerateContentReader(shown: UsageShown = upstreamUsageShown): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  const lines = passThrough(
    (data) => {
      const event = geminiPayload(isObject(data) ? data : null) as GeminiResponse;
      if (event.promptFeedback?.blockReason) output = finished = true;
      for (const candidate of event.candidates ?? []) {
        for (const part of candidate.content?.parts ?? []) {
          if (typeof part.text === 'string' && part.text) text.push(part.text);
          if (part.functionCall) text.push(String(part.functionCall.name ?? '') + JSON.stringify(part.functionCall.args ?? {}));
          if (part.text || part.functionCall) output = true;
        }
        if (candidate.finishReason) output = finished = true;
      }
      if (!event.usageMetadata) return;
      usage = usageOf(event.usageMetadata);
      // Gemini sends usage in every event: each one replaced is re-written, the count of the text so far.
      const billed = shown(usage, () => text.join(''));
      if (!billed) return;
      showGeminiUsage(event as Json, billed);
      return event as Json;
    },
    geminiErrorEvent,
    'Gemini',
  );
  return {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    line: lines.line,
    end: () => '',
    fail: lines.fail,
    usage: () => usage,
    text: () => text.join(''),
  };
}
