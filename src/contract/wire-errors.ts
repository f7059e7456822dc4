/**
 * Errors in the shapes of the vendors whose APIs callers speak: Anthropic's `{type: 'error', error: {type,
 * message}}` and Google's `{error: {code, message, status}}`, by HTTP status. The gateway's relay answers its
 * Anthropic and Gemini routes in them, the edge its own; OpenAI's shape is each deployable's default.
 */

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

export const anthropicErrorType = (status: number) => ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

export function anthropicErrorBody(status: number, message: string, requestId: string) {
  return { type: 'error', error: { type: anthropicErrorType(status), message }, request_id: requestId };
}

/**
 * Google's canonical status names by HTTP status (google.rpc.Code's HTTP mapping). Google has no 402: a
 * wallet that cannot pay reads as an exhausted quota.
 */
const GOOGLE_STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'RESOURCE_EXHAUSTED',
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

export const googleStatus = (status: number) => GOOGLE_STATUSES[status] ?? (status >= 500 ? 'UNAVAILABLE' : 'INVALID_ARGUMENT');

export function googleErrorBody(status: number, message: string) {
  return { error: { code: status, message, status: googleStatus(status) } };
}

/** The error shapes of the edge's callers: OpenAI's (the edge's own), Anthropic's and Google's. */
export type WireShape = 'openai' | 'anthropic' | 'gemini';

/**
 * The shape the edge answers errors in on a path (without its query): Anthropic's under /v1/messages,
 * Google's under /v1beta/ and for POST /v1/models/{model}:… (E10), OpenAI's everywhere else.
 */
export function edgeWireShapeOf(method: string, path: string): WireShape {
  if (/^\/v1\/messages(\/|$)/.test(path)) return 'anthropic';
  if (path.startsWith('/v1beta/') || (method === 'POST' && /^\/v1\/models\/[^/]+/.test(path))) return 'gemini';
  return 'openai';
}
