import { Writable } from 'node:stream';

/** A pino destination that keeps every log line in memory, so tests can grep them for secrets. */
export function captureLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines, text: () => lines.join('\n') };
}
