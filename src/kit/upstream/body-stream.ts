import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Deadline } from './deadline.js';
import { asUpstreamError, UpstreamError } from './errors.js';

export interface UpstreamStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body's lines (without line ends), each at most maxLineBytes, the whole at most maxBytes. */
  lines(): AsyncGenerator<string>;
  /**
   * The same lines as the text they came in, as many at a time as each read of the socket completed (fewer
   * awaits on a busy stream): line ends included (`\n` or `\r\n`), but for the last line of the body when it
   * has none (linesOf splits a block). Instead of lines(), never both.
   */
  blocks(): AsyncGenerator<string>;
  /** The body's bytes as they arrive (audio), the whole at most maxBytes; instead of lines(), never both. */
  chunks(): AsyncGenerator<Buffer>;
  /** The whole body as text (capped), for an error answer. */
  text(): Promise<string>;
  close(): void;
}

/** A line without the carriage return of its `\r\n` end. */
export const trimCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

/** The lines of a block (see UpstreamStream.blocks), without their line ends. */
export function linesOf(block: string): string[] {
  const lines = block.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map(trimCr);
}
const MAX_LINE_BYTES = 1024 * 1024;
type ReadCapped = (body: Dispatcher.ResponseData['body'], maxBytes: number, deadline: Deadline, timeoutMs: number) => Promise<string>;

/**
 * A streamed answer (UpstreamStream): its methods live on the prototype, so a stream makes no closures or
 * generator functions of its own (the relay opens thousands a second).
 */
export class BodyStream implements UpstreamStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Bytes of the body read so far. */
  private received = 0;

  constructor(
    private readonly res: Dispatcher.ResponseData,
    private readonly maxBytes: number,
    private readonly deadline: Deadline,
    private readonly timeoutMs: number,
    private readonly readCapped: ReadCapped,
  ) {
    this.status = res.statusCode;
    this.headers = res.headers;
  }

  text(): Promise<string> {
    return this.readCapped(this.res.body, Math.min(this.maxBytes, 1024 * 1024), this.deadline, this.timeoutMs);
  }

  close() {
    this.res.body.destroy();
    this.deadline.clear();
  }

  async *chunks(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of this.res.body) yield this.counted(chunk as Buffer);
    } catch (e) {
      throw this.failed(e);
    } finally {
      this.deadline.clear();
    }
  }

  /** Reads the body itself (not through chunks()): one generator less to pass through for every read. */
  async *blocks(): AsyncGenerator<string> {
    let pending = '';
    // A character's bytes may arrive split across chunks: the decoder keeps the first part until the rest comes.
    const utf8 = new TextDecoder();
    try {
      for await (const chunk of this.res.body) {
        pending += utf8.decode(this.counted(chunk as Buffer), { stream: true });
        const end = pending.lastIndexOf('\n');
        if (end >= 0) {
          yield end === pending.length - 1 ? pending : pending.slice(0, end + 1);
          pending = pending.slice(end + 1);
        }
        if (pending.length > MAX_LINE_BYTES) throw new UpstreamError('too_large', `a stream line exceeds ${MAX_LINE_BYTES} bytes`);
      }
      pending += utf8.decode();
      if (pending) yield pending;
    } catch (e) {
      throw this.failed(e);
    } finally {
      this.deadline.clear();
    }
  }

  async *lines(): AsyncGenerator<string> {
    for await (const block of this.blocks()) yield* linesOf(block);
  }

  /** A chunk of the body, counted against maxBytes (too_large beyond it). */
  private counted(chunk: Buffer): Buffer {
    this.received += chunk.length;
    if (this.received > this.maxBytes) throw new UpstreamError('too_large', `stream exceeds ${this.maxBytes} bytes`);
    return chunk;
  }

  private failed(e: unknown): UpstreamError {
    this.res.body.destroy();
    return asUpstreamError(e, this.deadline.passed ? this.timeoutMs : null);
  }
}
