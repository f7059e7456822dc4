import type { FastifyRequest } from 'fastify';
import { errorCatalog } from '../../contract/errors/index.js';
import { relayCodeOfKit } from '../../contract/errors/relay.js';
import type { RenderedError } from '../../kit/http/app.js';
import { formatOfRelayPath } from './formats/index.js';

/** The catalog code of an error answered in a vendor's shape, which has no field for it (GR05, GR06). */
export const RELAY_ERROR_CODE_HEADER = 'x-relay-error-code';
/** The error's `detail` parameter alone (percent-encoded), so a caller renders the catalog message itself. */
export const RELAY_ERROR_DETAIL_HEADER = 'x-relay-error-detail';

/**
 * Errors of the relay's internal API in the shape its callers read: the caller format of the path's (see
 * CallerFormat.errorBody), OpenAI's for the OpenAI routes (as the edge's). The vendor shapes with no room
 * for the catalog code (Anthropic's, Google's) have it in the `x-relay-error-code` header. An upstream
 * failure keeps the status the relay chose for it (data.status); every other route of the gateway keeps
 * the envelope (null).
 */
export function renderRelayError(req: FastifyRequest, e: { code: string; status: number; message: string; params?: Record<string, string | number>; data?: unknown }): RenderedError | null {
  // By path, not operation: answers given before routing (an unknown or malformed path) keep the shape too.
  if (!req.url.startsWith('/relay/')) return null;
  // The kit's refusals of a malformed body carry the relay's own code (the message stays the kit's).
  const own = relayCodeOfKit[e.code];
  if (own) e = { ...e, code: own };
  const status = (e.data as { status?: unknown } | undefined)?.status;
  const finalStatus = typeof status === 'number' ? status : e.status;
  const headers: Record<string, string> = { [RELAY_ERROR_CODE_HEADER]: e.code };
  if (e.params?.detail !== undefined) headers[RELAY_ERROR_DETAIL_HEADER] = encodeURIComponent(String(e.params.detail)).slice(0, 2000);
  const format = formatOfRelayPath(req.url.split('?')[0]!);
  const body = format.errorBody({ status: finalStatus, code: e.code, message: e.message, type: errorCatalog[e.code]?.type, field: e.params?.field, requestId: req.id });
  return { status: finalStatus, headers, body };
}
