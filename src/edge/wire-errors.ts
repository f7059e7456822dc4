import type { FastifyRequest } from 'fastify';
import { anthropicErrorBody, edgeWireShapeOf, googleErrorBody, type WireShape } from '../contract/wire-errors.js';
import type { RenderedError } from '../kit/http/app.js';

/** An edge error, rendered from the catalog, before it takes a caller's shape. */
export interface EdgeErrorView {
  status: number;
  /** The catalog code. */
  code: string;
  message: string;
  /** The catalog's OpenAI error type. */
  type: string;
  param: string | null;
  /** The customer port's own words for a refusal (ER01), passed on. */
  detail?: string;
}

/**
 * The shape a request's errors take, by its path (edgeWireShapeOf), so that errors raised before its
 * handler (the key, the body's size and schema, an unknown path) take it too.
 */
export function wireShapeOf(req: Pick<FastifyRequest, 'method' | 'url'>): WireShape {
  return edgeWireShapeOf(req.method, req.url.split('?')[0]!);
}

/**
 * The error in its caller's shape. The vendors' shapes have no field for the catalog code: it is in the
 * `x-error-code` header (Anthropic's SDK also reads the request id from `request-id`).
 */
export function wireError(shape: WireShape, e: EdgeErrorView, requestId: string): RenderedError {
  if (shape === 'anthropic') return { status: e.status, body: anthropicErrorBody(e.status, e.message, requestId), headers: { 'x-error-code': e.code, 'request-id': requestId } };
  if (shape === 'gemini') return { status: e.status, body: googleErrorBody(e.status, e.message), headers: { 'x-error-code': e.code } };
  return { status: e.status, body: { error: { message: e.message, type: e.type, code: e.code, param: e.param, ...(e.detail !== undefined ? { detail: e.detail } : {}) }, requestId } };
}
