import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { clientInfo, sendSession } from '../sessions/http.js';

const loginVerifyBody = Type.Object({
  flow_token: Type.Optional(Type.String({ maxLength: 128 })),
  method: Type.Optional(Type.String({ maxLength: 32 })),
  code: Type.Optional(Type.String({ maxLength: 32 })),
});

const verifyBody = Type.Object(
  {
    method: Type.Optional(Type.String({ maxLength: 32 })),
    scope: Type.Optional(Type.String({ maxLength: 64 })),
    context: Type.Optional(Type.Unknown()),
    code: Type.Optional(Type.String({ maxLength: 32 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    password_encrypted: Type.Optional(Type.String({ maxLength: 4096 })),
    encryption_key_id: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
);

const loginVerify = (id: 'A30' | 'A26') =>
  implement(id, {
    rateLimit: ['critical'],
    schema: { body: Type.Optional(loginVerifyBody) },
    handler: async (req, reply) => {
      const issued = await accountOf(req).services.verification.verifyLogin(req.body ?? {}, clientInfo(req));
      return sendSession(req, reply, issued);
    },
  });

export const verificationRoutes = [
  loginVerify('A30'),
  loginVerify('A26'),

  implement('A47', {
    rateLimit: ['security'],
    noStore: true,
    schema: { body: verifyBody },
    handler: async (req) => ok(await accountOf(req).services.verification.verify(identityOf(req), req.body)),
  }),

  implement('A48', {
    rateLimit: ['security'],
    schema: { querystring: Type.Object({ scope: Type.Optional(Type.String({ maxLength: 64 })) }) },
    handler: async (req) => ok(await accountOf(req).services.verification.methods(identityOf(req), req.query.scope)),
  }),
];
