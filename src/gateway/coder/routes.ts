import { implement, type OperationImpl } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { CoderService } from './service.js';
import { CoderKeyInfo, CoderUsageAnswer, gatewayErrors } from '../schemas.js';

/** G07–G09 answer the upstream's own answer and status, success false when it refused. */
const usage = { 200: { description: "The upstream's answer: success and upstream_status say how it answered", schema: CoderUsageAnswer } };

/** Coder (Codex) channels: refresh (G06), usage (G07), reset (G08), reset credits (G09). */
export function coderRoutes(coder: CoderService): OperationImpl<any>[] {
  return [
    implement('G06', {
      data: CoderKeyInfo,
      errors: gatewayErrors.coder,
      schema: { params: IdParams },
      noStore: true,
      handler: async (req) => ok(await coder.refresh(staffOf(req), req.params.id), 'refreshed'),
    }),
    implement('G07', {
      answers: usage,
      errors: gatewayErrors.coder,
      schema: { params: IdParams },
      handler: async (req) => coder.usage(staffOf(req), 'G07', req.params.id),
    }),
    implement('G09', {
      answers: usage,
      errors: gatewayErrors.coder,
      schema: { params: IdParams },
      handler: async (req) => coder.usage(staffOf(req), 'G09', req.params.id),
    }),
    implement('G08', {
      answers: usage,
      errors: gatewayErrors.coder,
      schema: { params: IdParams },
      handler: async (req) => {
        const key = req.headers['idempotency-key'];
        if (key !== undefined && (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key))) throw new AppError('IDEMPOTENCY_KEY_INVALID');
        return coder.usage(staffOf(req), 'G08', req.params.id, key);
      },
    }),
  ];
}
