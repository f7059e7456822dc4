import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Paths whose values never reach a log line. Request bodies and query strings are not logged at all;
 * these cover headers and any object a handler might log by mistake.
 */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-security-proof"]',
  'req.headers["new-api-user"]',
  'res.headers["set-cookie"]',
];
// Secret-bearing keys, redacted at the top level of a log object and one level down.
const SECRET_KEYS = ['password', 'password_encrypted', 'token', 'access_token', 'refresh_token', 'key', 'secret', 'code', 'proof_token', 'flow_token'];
REDACT.push(...SECRET_KEYS, ...SECRET_KEYS.map((k) => `*.${k}`));

const fixedShape = new WeakMap<Logger, Logger>();

/** How often buffered standard-output log lines are written out at the latest. */
const FLUSH_INTERVAL_MS = 1000;

/**
 * Standard output for log lines. With bufferBytes > 0 lines are collected and written with one
 * synchronous write once that many bytes wait, and at least every second: one system call per few dozen
 * request lines instead of one per line (a write into a pipe costs about 6 µs here; pino's asynchronous
 * mode costs more than that per line, it hands every write to the thread pool). Whatever is buffered is
 * written when the process exits, also after an uncaught exception; only a hard kill (SIGKILL, out of
 * memory) loses it. 0 writes every line at once.
 */
export function stdoutDestination(bufferBytes: number): DestinationStream {
  if (bufferBytes === 0) return pino.destination({ dest: 1, sync: true });
  const destination = pino.destination({ dest: 1, sync: true, minLength: bufferBytes });
  setInterval(() => destination.flushSync(), FLUSH_INTERVAL_MS).unref();
  process.on('exit', () => destination.flushSync());
  return destination;
}

export function createLogger(level: string, stream: DestinationStream = stdoutDestination(0)): Logger {
  const log = pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, stream);
  // Same destination object (pino's own stdout stream when none was given), so lines never interleave.
  const destination = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  fixedShape.set(log, pino({ level: 'trace' }, destination));
  return log;
}

/**
 * A logger without the redaction pass, for lines whose object has a fixed shape built from values that
 * are never secret (the per-request summary: method, route pattern, ip, status, ms), where the pass
 * costs as much as the rest of the line and can never change it. It logs at every level: callers gate
 * on `log.isLevelEnabled(...)` of the redacting logger, so LOG_LEVEL still governs. Everything else
 * goes through the redacting logger. For a logger not made by createLogger, returns that logger.
 */
export function fixedShapeLogger(log: Logger): Logger {
  const known = fixedShape.get(log);
  if (known) return known;
  // A pino child is created with Object.create(parent): find the root made by createLogger, then
  // give the plain logger the same bindings (e.g. {deployable}), so the line comes out unchanged.
  for (let p: object | null = Object.getPrototypeOf(log); p; p = Object.getPrototypeOf(p)) {
    const root = fixedShape.get(p as Logger);
    if (!root) continue;
    const plain = root.child(log.bindings());
    fixedShape.set(log, plain);
    return plain;
  }
  return log;
}

export type { Logger };
