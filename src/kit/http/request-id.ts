import type { IncomingHttpHeaders } from 'node:http';
import { uuidV7 } from '../crypto/uuid7.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * A request's id: the client's X-Request-Id when it is a plain token of at most 64 characters (and the app does
 * not give every request an id of its own), else ours, a UUIDv7 (time-ordered: records keyed by a request id go
 * in at the end of their index, kit/crypto/uuid7.ts).
 */
export function requestIdOf(headers: IncomingHttpHeaders, ownRequestIds = false): string {
  const given = ownRequestIds ? undefined : headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : uuidV7();
}
