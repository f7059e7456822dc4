import type { FastifyRequest } from 'fastify';
import { errorCatalog } from '../../contract/errors/index.js';

/**
 * Errors of the relay's internal API in the OpenAI shape its callers read (as the edge's): {error: {message,
 * type, code, param}, requestId}. An upstream failure keeps the status the relay chose for it (data.status); every other route of
 * the gateway keeps the envelope (null).
 */
export function renderRelayError(req: FastifyRequest, e: { code: string; status: number; message: string; params?: Record<string, string | number>; data?: unknown }) {
  // By path, not operation: answers given before routing (an unknown or malformed path) keep the shape too.
  if (!req.url.startsWith('/relay/')) return null;
  // The kit's refusals of a malformed body carry the relay's own code (the message stays the kit's).
  if (e.code === 'INVALID_PARAMETERS' || e.code === 'INVALID_JSON') e = { ...e, code: 'relay_invalid_request' };
  const status = (e.data as { status?: unknown } | undefined)?.status;
  const finalStatus = typeof status === 'number' ? status : e.status;
  const type = errorCatalog[e.code]?.type ?? (finalStatus >= 500 ? 'server_error' : 'invalid_request_error');
  const field = e.params?.field;
  return { status: finalStatus, body: { error: { message: e.message, type, code: e.code, param: field === undefined ? null : String(field) }, requestId: req.id } };
}
