import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../kit/http/errors.js';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { clientInfo, sendSession } from '../sessions/http.js';
import { clearPendingLogin, pendingLoginOf } from '../login/pending-login.js';
import { identityOf, originGuard } from '../auth.js';
import { AuthBundle, SecurityProof, VerificationMethods, moduleErrors } from '../schemas.js';
import type { VerificationService } from './service.js';

const loginVerifyBody = Type.Object({
  flow_token: Type.Optional(Type.String({ maxLength: 128 })),
  method: Type.Optional(Type.String({ maxLength: 32 })),
  code: Type.Optional(Type.String({ maxLength: 32 })),
});

/**
 * The flow token of A26: the body's, or else (new-api's dashboard posts only {code}) the pending-login
 * cookie's, which passes the same origin check as the refresh cookie (A23, A24). No cookie either is the
 * reference's "session expired".
 */
async function loginFlowTokenOf(req: FastifyRequest, body: { flow_token?: string; code?: string }) {
  if (body.flow_token?.trim() || body.code === undefined) return { token: body.flow_token, fromCookie: false };
  await originGuard(req);
  const token = pendingLoginOf(req);
  if (!token) throw new AppError('AUTH_FLOW_INVALID');
  return { token, fromCookie: true };
}

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

export function verificationRoutes(verification: VerificationService) {
  return [
    implement('A30', {
      data: AuthBundle,
      errors: moduleErrors.secondStep,
      rateLimit: ['critical'],
      schema: { body: Type.Optional(loginVerifyBody) },
      handler: async (req, reply) => {
        const issued = await verification.verifyLogin(req.body ?? {}, clientInfo(req));
        clearPendingLogin(req, reply);
        return sendSession(req, reply, issued);
      },
    }),

    // A30's handler, with the flow token from the pending-login cookie when the body has none.
    implement('A26', {
      data: AuthBundle,
      errors: moduleErrors.secondStep,
      rateLimit: ['critical'],
      schema: { body: Type.Optional(loginVerifyBody) },
      handler: async (req, reply) => {
        const body = req.body ?? {};
        const { token, fromCookie } = await loginFlowTokenOf(req, body);
        try {
          const issued = await verification.verifyLogin({ ...body, flow_token: token }, clientInfo(req));
          clearPendingLogin(req, reply);
          return sendSession(req, reply, issued);
        } catch (e) {
          if (fromCookie && e instanceof AppError && e.code === 'AUTH_FLOW_INVALID') clearPendingLogin(req, reply);
          throw e;
        }
      },
    }),

    implement('A47', {
      data: SecurityProof,
      errors: moduleErrors.verification,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: verifyBody },
      handler: async (req) => ok(await verification.verify(identityOf(req), req.body)),
    }),

    implement('A48', {
      data: VerificationMethods,
      errors: moduleErrors.verification,
      rateLimit: ['security_read'],
      schema: { querystring: Type.Object({ scope: Type.Optional(Type.String({ maxLength: 64 })) }) },
      handler: async (req) => ok(await verification.methods(identityOf(req), req.query.scope)),
    }),
  ];
}
