import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { BalanceService } from './service.js';
import { BalanceAnswer, JobStarted, gatewayErrors } from '../schemas.js';

/** Balances: one channel (G36), all channels as a background job (G35). */
export function balanceRoutes(balances: BalanceService): OperationImpl<any>[] {
  return [
    implement('G36', {
      data: BalanceAnswer,
      errors: gatewayErrors.balance,
      schema: { params: IdParams },
      handler: async (req) => {
        const b = await balances.updateOne(staffOf(req), req.params.id);
        // The reference puts `balance` at the top level; data carries it too.
        return { ...ok({ balance: b.balance, currency: b.currency }), balance: b.balance };
      },
    }),
    implement('G35', { data: JobStarted, errors: gatewayErrors.balance, handler: async (req) => ok(await balances.startAll(staffOf(req))) }),
  ];
}
