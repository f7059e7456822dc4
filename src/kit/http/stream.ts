import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { CancelSource, type CancelSignal } from './cancel-signal.js';

/**
 * Writes a stream of pieces (text, or bytes) as the answer, pulling the next piece only when the socket took the last
 * one (a slow reader holds the producer back instead of filling memory). Stops when the client goes away
 * (`gone` aborted), ending the producer with return() so its clean-up runs. Answers whether every piece was
 * written; the caller ends the answer (and may write a last piece first).
 */
export async function writePieces(reply: FastifyReply, head: { contentType: string; headers?: Record<string, string> }, pieces: AsyncIterable<string | Uint8Array>, gone: CancelSignal): Promise<boolean> {
  reply.hijack();
  return writePiecesTo(reply.raw, head, pieces, gone);
}

/**
 * writePieces on a response of node:http's (a route of the fast lane, or a hijacked reply's). The pieces written
 * within one turn of the event loop (and the caller's end() in that turn) go out in one write to the socket:
 * each write of its own is a system call, the largest cost of a short stream that arrived whole.
 */
export async function writePiecesTo(raw: ServerResponse, head: { contentType: string; headers?: Record<string, string> }, pieces: AsyncIterable<string | Uint8Array>, gone: CancelSignal): Promise<boolean> {
  raw.writeHead(200, { 'content-type': head.contentType, 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...head.headers });
  const it = pieces[Symbol.asyncIterator]();
  let corked = false;
  const uncork = () => {
    corked = false;
    // end() uncorks fully; after it the socket may already serve the connection's next request.
    if (!raw.writableEnded) raw.uncork();
  };
  for (;;) {
    // Pulled before the check: a started generator's return() runs its clean-up (a fresh one's would not).
    const next = await it.next();
    if (next.done) return !gone.aborted;
    if (gone.aborted) {
      await it.return?.(undefined);
      return false;
    }
    if (!corked) {
      corked = true;
      raw.cork();
      setImmediate(uncork);
    }
    if (!raw.write(next.value)) await drained(raw, gone);
  }
}

/** A signal that fires when the client closes the connection before the answer was finished. */
export function clientGone(reply: FastifyReply): CancelSignal {
  return closedEarly(reply.raw);
}

/** clientGone for a response of node:http's. */
export function closedEarly(raw: ServerResponse): CancelSignal {
  const gone = new CancelSource();
  raw.on('close', () => {
    if (!raw.writableFinished) gone.abort();
  });
  return gone;
}

function drained(raw: NodeJS.WritableStream, gone: CancelSignal): Promise<void> {
  return new Promise((resolve) => {
    if (gone.aborted) return resolve();
    const done = () => {
      raw.off('drain', done);
      gone.removeEventListener('abort', done);
      resolve();
    };
    raw.on('drain', done);
    gone.addEventListener('abort', done);
  });
}
