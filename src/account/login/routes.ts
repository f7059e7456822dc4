import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { clientInfo, sendSession } from '../sessions/http.js';
import { sendChallenge } from './pending-login.js';
import { LoginOutcome, moduleErrors } from '../schemas.js';
import type { LoginService } from './service.js';

const loginBody = Type.Object({
  username: Type.Optional(Type.String({ maxLength: 254 })),
  password: Type.Optional(Type.String({ maxLength: 1024 })),
  password_encrypted: Type.Optional(Type.String({ maxLength: 4096 })),
  encryption_key_id: Type.Optional(Type.String({ maxLength: 128 })),
});

export function loginRoutes(login: LoginService) {
  return [
    implement('A25', {
      data: LoginOutcome,
      errors: moduleErrors.login,
      rateLimit: ['critical'],
      schema: { body: Type.Optional(loginBody) },
      handler: async (req, reply) => {
        const outcome = await login.passwordLogin(req.body ?? {}, clientInfo(req));
        if (outcome.kind === 'challenge') return sendChallenge(req, reply, outcome.data);
        return sendSession(req, reply, outcome.issued);
      },
    }),

    implement('A27', {
      data: Type.Union([Type.Object({ enabled: Type.Literal(false) }), Type.Object({ enabled: Type.Literal(true), kid: Type.String(), public_key: Type.String() })]),
      errors: moduleErrors.login,
      handler: async (req) => ok(await login.encryptionKey()),
    }),
  ];
}
