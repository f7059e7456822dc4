import { Type } from '@sinclair/typebox';
import { implement } from '../../../contract/types.js';
import { ok } from '../../../kit/http/envelope.js';
import { identityOf } from '../../auth.js';
import { userIdSchema } from '../../users/routes.js';
import { moduleErrors } from '../../schemas.js';
import { EDGE_WRITE_ERRORS } from '../edge.js';
import { balanceFields } from '../schemas.js';
import type { WalletService } from './service.js';

/**
 * new-api's admin user edit (AS17), for the balance only: `{id, quota, reason}` sets the user's quota as an
 * audited wallet movement. The dashboard's other fields (username, display_name, group, remark…) are not
 * applied here; a password is refused.
 */
export function walletRoutes(wallet: WalletService) {
  return [
    implement('AS17', {
      data: Type.Object({ id: Type.Integer(), ...balanceFields }),
      errors: [...EDGE_WRITE_ERRORS, ...moduleErrors.admin, 'QUOTA_BELOW_RESERVED'],
      schema: {
        body: Type.Object({
          id: userIdSchema,
          quota: Type.Optional(Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })),
          reason: Type.Optional(Type.String({ maxLength: 1000 })),
          password: Type.Optional(Type.String({ maxLength: 1024 })),
        }),
      },
      handler: async (req) => ok(await wallet.setQuota(identityOf(req), req.body)),
    }),
  ];
}
