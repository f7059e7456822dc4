import type { FastifyRequest } from 'fastify';
import type { ChatError } from '../contract/customer.js';
import { errorCatalog } from '../contract/errors/index.js';
import { edgeCodeOf } from '../contract/errors/edge.js';
import { langOf, renderMessage, type Lang } from '../kit/http/errors.js';
import { wireError, wireShapeOf } from './wire-errors.js';

interface EdgeFailure {
  code: string;
  params?: Record<string, string | number>;
  data?: unknown;
}

/**
 * A failure as the edge answers it: its status and the OpenAI-style error object {message, type, code,
 * param}. Codes and messages come from the error catalog (src/contract/errors/edge.ts); the kit's codes are
 * renamed there.
 */
export function edgeErrorOf(e: EdgeFailure, lang: Lang): { status: number; error: ChatError & { detail?: string } } {
  let code = edgeCodeOf(e.code);
  if (!errorCatalog[code]?.type) code = 'internal_error';
  const def = errorCatalog[code]!;
  const field = e.params?.field;
  // The reference's placeholder answer carries param "" (and is copied exactly); elsewhere null when no field.
  const param = field !== undefined ? String(field) : code === 'api_not_implemented' ? '' : null;
  // A relay failure keeps the status the gateway answered (an upstream's, after its status_code_mapping).
  const passed = (e.data as { status?: unknown } | undefined)?.status;
  // A refusal of the customer port (ER01) carries the port's own words for the account service to pass on.
  const detail = (e.data as { refusalDetail?: unknown } | undefined)?.refusalDetail;
  return {
    status: code.startsWith('relay_') && typeof passed === 'number' ? passed : def.status,
    error: { message: renderMessage(def, lang, e.params), type: def.type!, code, param, ...(typeof detail === 'string' ? { detail } : {}) },
  };
}

/**
 * The edge's error answer: OpenAI style {error: {message, type, code, param}, requestId}, or the shape of
 * the Anthropic or Gemini caller a route serves (wire-errors.ts).
 */
export function renderEdgeError(req: FastifyRequest, e: EdgeFailure) {
  const params: Record<string, string | number> = { ...e.params };
  if (edgeCodeOf(e.code) === 'unknown_route') Object.assign(params, { method: req.method, path: req.url.split('?')[0]!.slice(0, 200) });
  const { status, error } = edgeErrorOf({ ...e, params }, langOf(req.headers['accept-language']));
  return wireError(wireShapeOf(req), { status, ...error }, req.id);
}
