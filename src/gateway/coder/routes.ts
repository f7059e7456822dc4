import { implement, type OperationImpl } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { CoderService } from './service.js';

/** Coder (Codex) channels: refresh (G06), usage (G07), reset (G08), reset credits (G09). */
export function coderRoutes(coder: CoderService): OperationImpl<any>[] {
  return [
    implement('G06', { schema: { params: IdParams }, noStore: true, handler: async (req) => ok(await coder.refresh(staffOf(req), req.params.id), 'refreshed') }),
    implement('G07', { schema: { params: IdParams }, handler: async (req) => coder.usage(staffOf(req), 'G07', req.params.id) }),
    implement('G09', { schema: { params: IdParams }, handler: async (req) => coder.usage(staffOf(req), 'G09', req.params.id) }),
    implement('G08', {
      schema: { params: IdParams },
      handler: async (req) => {
        const key = req.headers['idempotency-key'];
        if (key !== undefined && (typeof key !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(key))) throw new AppError('IDEMPOTENCY_KEY_INVALID');
        return coder.usage(staffOf(req), 'G08', req.params.id, key);
      },
    }),
  ];
}
