import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { AppError, langOf } from '../../kit/http/errors.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { normalizeEmail, type EmailService } from './service.js';
import { NoData } from '../../contract/types.js';
import { EmailBindingFlow, SessionRotation, moduleErrors } from '../schemas.js';
import type { EmailBindingService } from './binding.js';

export const langOfRequest = (req: FastifyRequest) => langOf(req.headers['accept-language']);

/** The public base URL for links in mail and OAuth redirects: SERVER_ADDRESS, else this request's origin. */
export function baseUrlOf(req: FastifyRequest): string {
  return accountOf(req).config.mailOAuth.serverAddress || `${req.protocol}://${req.host}`;
}

export function emailCodeRoutes(email: EmailService) {
  return [
    implement('A46', {
      data: NoData,
      errors: moduleErrors.email,
      schema: { querystring: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) }) },
      handler: async (req) => {
        await email.sendVerificationCode(req.query.email, req.ip, langOfRequest(req));
        return ok();
      },
    }),
  ];
}

const bindBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254 })),
  flow_token: Type.Optional(Type.String({ maxLength: 256 })),
  code: Type.Optional(Type.String({ maxLength: 32 })),
  new_code: Type.Optional(Type.String({ maxLength: 32 })),
  old_code: Type.Optional(Type.String({ maxLength: 32 })),
});

export function emailBindingRoutes(emailBinding: EmailBindingService, verification: ProofVerifier) {
  return [
    implement('A04', {
      data: EmailBindingFlow,
      errors: moduleErrors.emailBinding,
      rateLimit: ['critical'],
      schema: { body: bindBody },
      handler: async (req) => {
        const identity = identityOf(req);
        if (identity.via === 'personal_token' || !identity.sid) throw new AppError('EMAIL_BINDING_PERSONAL_TOKEN');
        const address = normalizeEmail(req.body.email);
        const proof = await requireSecurityProof(verification, req, identity, 'AccountBind', { provider: 'email', email: address });
        return ok(await emailBinding.start(identity, address, proof.method, req.ip, langOfRequest(req)));
      },
    }),

    implement('A03', {
      data: EmailBindingFlow,
      errors: moduleErrors.emailBinding,
      rateLimit: ['critical'],
      schema: { body: bindBody },
      handler: async (req) => ok(await emailBinding.resend(identityOf(req), req.body.flow_token, langOfRequest(req))),
    }),

    implement('A02', {
      data: Type.Object({ ...SessionRotation.properties, email: Type.String(), notification_warning: Type.Boolean() }),
      errors: moduleErrors.emailBinding,
      rateLimit: ['critical'],
      schema: { body: bindBody },
      handler: async (req) => ok(await emailBinding.complete(identityOf(req), req.body, langOfRequest(req)), 'Email binding successful'),
    }),
  ];
}
