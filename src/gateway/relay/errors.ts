import type { FastifyRequest } from 'fastify';
import { errorCatalog } from '../../contract/errors/index.js';
import { relayCodeOfKit } from '../../contract/errors/relay.js';
import type { RenderedError } from '../../kit/http/app.js';

/** The catalog code of an error answered in a vendor's shape, which has no field for it (GR05, GR06). */
export const RELAY_ERROR_CODE_HEADER = 'x-relay-error-code';
/** The error's `detail` parameter alone (percent-encoded), so a caller renders the catalog message itself. */
export const RELAY_ERROR_DETAIL_HEADER = 'x-relay-error-detail';

/** Anthropic's error types by HTTP status (its API's documented list); other statuses take the nearest. */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** Google's canonical status names by HTTP status (google.rpc.Code's HTTP mapping). */
const GOOGLE_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export const anthropicErrorType = (status: number) => ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
export const googleStatus = (status: number) => GOOGLE_STATUSES[status] ?? (status >= 500 ? 'UNAVAILABLE' : 'INVALID_ARGUMENT');

/** The caller format a relay path speaks: its errors are answered in that vendor's shape. */
function callerShape(url: string): 'openai' | 'anthropic' | 'gemini' {
  const path = url.split('?')[0]!;
  if (/^\/relay\/v1\/messages\/?$/.test(path)) return 'anthropic';
  if (path.startsWith('/relay/v1beta/')) return 'gemini';
  return 'openai';
}

/**
 * Errors of the relay's internal API in the shape its callers read. The OpenAI routes (as the edge's):
 * {error: {message, type, code, param}, requestId}. GR05 (Anthropic Messages): {type: 'error', error: {type,
 * message}, request_id}, the type Anthropic uses for the status. GR06 (Gemini): {error: {code, message,
 * status}}, code the HTTP status and status Google's name for it. The two vendor shapes have no room for the
 * catalog code: it goes in the `x-relay-error-code` header. An upstream failure keeps the status the relay
 * chose for it (data.status); every other route of the gateway keeps the envelope (null).
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
  switch (callerShape(req.url)) {
    case 'anthropic':
      return { status: finalStatus, headers, body: { type: 'error', error: { type: anthropicErrorType(finalStatus), message: e.message }, request_id: req.id } };
    case 'gemini':
      return { status: finalStatus, headers, body: { error: { code: finalStatus, message: e.message, status: googleStatus(finalStatus) } } };
    default: {
      const type = errorCatalog[e.code]?.type ?? (finalStatus >= 500 ? 'server_error' : 'invalid_request_error');
      const field = e.params?.field;
      return { status: finalStatus, headers, body: { error: { message: e.message, type, code: e.code, param: field === undefined ? null : String(field) }, requestId: req.id } };
    }
  }
}
