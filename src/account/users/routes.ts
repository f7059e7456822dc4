import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { accountOf } from '../context.js';

export const userRoutes = [
  implement('A41', {
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
      await accountOf(req).services.users.register(req.body ?? {});
      return ok();
    },
  }),
];
