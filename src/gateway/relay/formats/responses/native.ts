import type { ChatUsage, Json } from '../../../providers/pivot.js';
import { payloadError } from '../../../providers/openai/relay.js';
import { UpstreamPayloadError } from '../../../providers/types.js';
import { upstreamUsageShown, type UsageShown } from '../shown-usage.js';
import type { StreamReader } from '../stream-reader.js';
import { responsesStreamUsage, responsesUsage, showResponsesUsage } from './answer.js';

function responseText(json: unknown): string {
  const output = (json as { output?: { content?: { text?: unknown }[]; arguments?: unknown }[] })?.output ?? [];
  return output.map((o) => (o.content ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('') + (typeof o.arguments === 'string' ? o.arguments : '')).join('');
}

/** Usage and text of a native `response` (OpenAI, Azure); an error body throws (retried elsewhere). */
export function nativeResponsesAnswer(json: unknown): { usage: ChatUsage | null; text: string } {
  const usage = responsesUsage(json);
  // As on the chat path: the upstream's message and code (for the auto-disable rules), counted by the breaker.
  const error = payloadError(json);
  if (error) throw error;
  return { usage, text: responseText(json) };
}

const BEFORE_OUTPUT = new Set(['response.created', 'response.in_progress', 'response.queued']);
const FINAL = new Set(['response.completed', 'response.incomplete']);

/**
 * A native Responses stream (OpenAI, Azure) passed through line by line, watched for usage and errors; the
 * final event is re-written only when the relay replaces its usage (`shown`).
 */
export function nativeResponsesReader(shown: UsageShown = upstreamUsageShown): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  let sequence = 0;
  /** Whether the last line passed left an event open (not yet ended by its blank line). */
  let open = false;
  return {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    line(line) {
      if (line.startsWith('data:')) {
        let event: { type?: unknown; delta?: unknown; sequence_number?: unknown; response?: Json & { error?: { message?: unknown; code?: unknown } }; message?: unknown; code?: unknown };
        try {
          event = JSON.parse(line.slice(5));
        } catch {
          throw new UpstreamPayloadError('a stream event is not JSON');
        }
        const type = String(event.type ?? '');
        if (typeof event.sequence_number === 'number') sequence = event.sequence_number;
        if (type === 'error' || type === 'response.failed') {
          const e = type === 'error' ? event : (event.response?.error ?? {});
          throw new UpstreamPayloadError(typeof e.message === 'string' ? e.message : 'the upstream reported an error', typeof e.code === 'string' ? e.code : null);
        }
        if (!BEFORE_OUTPUT.has(type)) output = true;
        if (type === 'response.output_text.delta' && typeof event.delta === 'string') text.push(event.delta);
        if (FINAL.has(type)) {
          finished = true;
          usage = responsesStreamUsage(event) ?? usage;
          const billed = event.response && shown(usage, () => text.join(''));
          if (billed) {
            showResponsesUsage(event.response!, billed);
            open = true;
            return `data: ${JSON.stringify(event)}\n`;
          }
        }
      }
      open = line !== '';
      return line + '\n';
    },
    end: () => '',
    fail(message, code) {
      const event = { type: 'error', code, message, param: null, sequence_number: sequence + 1 };
      // A stream cut inside an event: its blank line first, so the error is an event of its own.
      return `${open ? '\n' : ''}event: error\ndata: ${JSON.stringify(event)}\n\n`;
    },
    usage: () => usage,
    text: () => text.join(''),
  };
}
