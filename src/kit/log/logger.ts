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
  '*.password',
  '*.password_encrypted',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.key',
  '*.secret',
  '*.code',
  '*.proof_token',
  '*.flow_token',
];

export function createLogger(level: string, stream?: DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, stream);
}

export type { Logger };
