import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { NoData } from '../../contract/types.js';
import { moduleErrors } from '../schemas.js';
import type { UsersService } from './service.js';

/** A user id in a path: capped so a longer number is a 400, not a PostgreSQL bigint overflow (a 500). */
export const userIdSchema = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export function userRoutes(users: UsersService) {
  return [
    implement('A41', {
      data: NoData,
      errors: moduleErrors.users,
      rateLimit: ['critical'],
      schema: {
        body: Type.Optional(
          Type.Object({
            username: Type.Optional(Type.String({ maxLength: 256 })),
            password: Type.Optional(Type.String({ maxLength: 1024 })),
            email: Type.Optional(Type.String({ maxLength: 254 })),
            verification_code: Type.Optional(Type.String({ maxLength: 64 })),
            aff_code: Type.Optional(Type.String({ maxLength: 32 })),
          }),
        ),
      },
      handler: async (req) => {
        await users.register(req.body ?? {});
        return ok();
      },
    }),
  ];
}
