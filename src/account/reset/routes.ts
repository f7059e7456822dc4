import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { baseUrlOf, langOfRequest } from '../email/routes.js';
import { NoData } from '../../contract/types.js';
import { moduleErrors } from '../schemas.js';
import type { ResetService } from './service.js';

export function resetRoutes(reset: ResetService) {
  return [
    implement('A11', {
      data: NoData,
      errors: moduleErrors.reset,
      rateLimit: ['critical'],
      schema: { querystring: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) }) },
      handler: async (req) => {
        await reset.request(req.query.email, req.ip, langOfRequest(req), baseUrlOf(req));
        return ok();
      },
    }),

    implement('A42', {
      data: Type.Optional(Type.String()),
      errors: moduleErrors.reset,
      rateLimit: ['critical'],
      schema: {
        body: Type.Optional(
          Type.Object({
            email: Type.Optional(Type.String({ maxLength: 254 })),
            user: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'the user id of an admin\'s reset link (AS21), in place of email' })),
            token: Type.Optional(Type.String({ maxLength: 256 })),
            password: Type.Optional(Type.String({ maxLength: 1024 })),
          }),
        ),
      },
      handler: async (req) => {
        const generated = await reset.reset(req.body ?? {});
        return generated === null ? ok() : ok(generated);
      },
    }),
  ];
}
