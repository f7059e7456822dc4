import { linesOf, trimCr } from '../../../kit/upstream/body-stream.js';
import { showChatUsage, upstreamUsageShown, type UsageShown } from './shown-usage.js';
import type { ChatChunk, ChatUsage } from '../../providers/pivot.js';
import type { StreamDecoder } from '../../providers/types.js';

/**
 * Turns an upstream stream, line by line, into the caller's stream text, and watches it: whether model
 * output has begun (the point after which a failure can no longer move to another channel), whether the
 * stream ended properly, its usage and its text (for counting when no usage came).
 */
export interface StreamReader {
  line(line: string): string;
  /**
   * Whole lines at once, as the upstream sent them (each ending in a line feed, but for the last of a stream):
   * the same as line() for each, in fewer steps where the reader can. See readBlock.
   */
  block?(text: string): BlockRead;
  readonly output: boolean;
  readonly finished: boolean;
  /** The proper end in the caller's format (after `finished`). */
  end(): string;
  /** A protocol-correct error ending in the caller's format, once output has begun. */
  fail(message: string, code: string): string;
  usage(): ChatUsage | null;
  text(): string;
}

/** Writes chat chunks in a caller format. `raw` is the upstream's own JSON text of the chunk, when it can pass as is. */
export interface ChunkEncoder {
  chunk(c: ChatChunk, raw?: string): string;
  end(): string;
  error(message: string, code: string): string;
}

/** A chunk line that may need a look: a finish reason, usage, an error or the end marker. */
const NOTABLE = /"finish_reason":\s*"|"usage"|"error"|\[DONE\]/;
const NOTABLE_AHEAD = new RegExp(NOTABLE.source, 'g');

/** What a block of lines gave the caller, and the error a line raised (after the output before it). */
export interface BlockRead {
  out: string;
  error?: unknown;
}

/**
 * Feeds a block of lines to a reader: what the caller gets from them, and the error a line raised, if one did
 * (what came before the bad line still goes out, then the error).
 */
export function readBlock(reader: StreamReader, text: string): BlockRead {
  if (reader.block) return reader.block(text);
  let out = '';
  try {
    for (const line of linesOf(text)) out += reader.line(line);
  } catch (error) {
    return { out, error };
  }
  return { out };
}

/**
 * Where a run of plain passed-through events starting at `at` ends: events of one `data:` line that needs no
 * look (see NOTABLE) and a blank line, `\n`-terminated. `at` itself when none starts there.
 */
function plainEventsEnd(text: string, at: number): number {
  NOTABLE_AHEAD.lastIndex = at;
  const notable = NOTABLE_AHEAD.exec(text)?.index ?? Infinity;
  let end = at;
  for (;;) {
    if (!text.startsWith('data:', end)) return end;
    const nl = text.indexOf('\n', end);
    if (nl < 0 || nl > notable || text.charCodeAt(nl + 1) !== 10 || text.charCodeAt(nl - 1) === 13) return end;
    end = nl + 2;
  }
}

/** The text a chunk adds: content, reasoning and tool calls (for counting when no usage came). */
function chunkText(c: ChatChunk): string {
  let t = '';
  for (const choice of c.choices ?? []) {
    const d = choice.delta ?? {};
    t += (d.content ?? '') + (d.reasoning_content ?? '');
    for (const call of d.tool_calls ?? []) t += (call.function?.name ?? '') + (call.function?.arguments ?? '');
  }
  return t;
}

/** Characters of passed-through lines a stream keeps unread (for counting its text if no usage comes). */
const MAX_UNPARSED_CHARS = 1024 * 1024;

/** The text of passed-through events: of each `data:` line's chunk (a line that is not JSON adds nothing). */
function parsedText(events: string): string {
  let t = '';
  for (const line of events.split('\n')) {
    if (!line.startsWith('data:')) continue;
    try {
      t += chunkText(JSON.parse(line.slice(5)) as ChatChunk);
    } catch {
      // not a chunk
    }
  }
  return t;
}

/**
 * An upstream stream read through its provider's decoder into chat chunks, written by a caller encoder. With
 * `passRaw` (an OpenAI-style upstream and a chat caller) a plain content line, once output has begun, goes
 * out as it came without being parsed; it is parsed at the end only if the upstream never gave usage. A
 * usage chunk whose counts the relay replaces goes out with the billed ones (`shown`), re-written.
 */
export function pivotReader(decoder: StreamDecoder, encoder: ChunkEncoder, passRaw: boolean, shown: UsageShown = upstreamUsageShown): StreamReader {
  let output = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  const text: string[] = [];
  const unparsed: string[] = [];
  let unparsedChars = 0;
  /**
   * A passed-through data line waits for the blank line that ends its event: a stream cut inside the line
   * (then EOF) leaves an incomplete event, which is dropped, as an SSE client drops it, never sent broken.
   */
  let held: string | null = null;
  const allText = () => text.join('') + unparsed.map(parsedText).join('');
  /** Passed-through events, kept unread; a long stream is not kept whole: past a bound they are read for their text. */
  const keep = (events: string) => {
    unparsed.push(events);
    unparsedChars += events.length;
    if (unparsedChars > MAX_UNPARSED_CHARS) {
      text.push(unparsed.map(parsedText).join(''));
      unparsed.length = 0;
      unparsedChars = 0;
    }
  };
  /** The chunk as the caller gets it: with the billed usage if the upstream's was replaced (never passed raw then). */
  const encode = (c: ChatChunk, raw?: string): string => {
    if (!c.usage) return encoder.chunk(c, raw);
    usage = c.usage;
    const billed = shown(c.usage, allText);
    if (!billed) return encoder.chunk(c, raw);
    showChatUsage(c, billed);
    return encoder.chunk(c);
  };
  const reader: StreamReader = {
    get output() {
      return output;
    },
    get finished() {
      return finished;
    },
    /**
     * Runs of plain events passed through (see plainEventsEnd) go out as one slice of the upstream's text,
     * exactly what line() would write for them; every other line goes through line().
     */
    block(text) {
      let out = '';
      let at = 0;
      try {
        while (at < text.length) {
          if (passRaw && output && held === null) {
            const end = plainEventsEnd(text, at);
            if (end > at) {
              const run = text.slice(at, end);
              keep(run);
              out += run;
              at = end;
              continue;
            }
          }
          const nl = text.indexOf('\n', at);
          const stop = nl < 0 ? text.length : nl;
          out += reader.line(trimCr(text.slice(at, stop)));
          at = stop + 1;
        }
      } catch (error) {
        return { out, error };
      }
      return { out };
    },
    line(line) {
      let out = '';
      if (held !== null) {
        // The blank line completes the held event; an event's end is a blank line, so it goes out now.
        keep(held);
        out = `${held}\n\n`;
        held = null;
        if (line === '') return out;
      }
      if (passRaw && output && line.startsWith('data:') && !NOTABLE.test(line)) {
        held = line;
        return out;
      }
      const chunks = decoder.line(line);
      for (const c of chunks) {
        text.push(chunkText(c));
        for (const choice of c.choices ?? []) {
          const d = choice.delta ?? {};
          if (d.content || d.reasoning_content || d.tool_calls?.length || choice.finish_reason) output = true;
          if (choice.finish_reason) finished = true;
        }
        // An OpenAI-style upstream's data line is exactly one chunk: its text goes out unchanged.
        out += encode(c, passRaw && chunks.length === 1 ? line.slice(line.indexOf(':') + 1).trim() : undefined);
      }
      return out;
    },
    end() {
      let out = '';
      for (const c of decoder.end()) {
        out += encode(c);
      }
      return out + encoder.end();
    },
    fail: (message, code) => encoder.error(message, code),
    // A stream cut before its usage chunk: what the upstream reported so far, when its decoder keeps that.
    usage: () => usage ?? decoder.reported?.() ?? null,
    text: allText,
  };
  return reader;
}
