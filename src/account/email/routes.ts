import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { langOf } from '../../kit/http/errors.js';
import { accountOf } from '../context.js';

export const langOfRequest = (req: FastifyRequest) => langOf(req.headers['accept-language']);

/** The public base URL for links in mail and OAuth redirects: SERVER_ADDRESS, else this request's origin. */
export function baseUrlOf(req: FastifyRequest): string {
  return accountOf(req).config.mailOAuth.serverAddress || `${req.protocol}://${req.host}`;
}

export const emailCodeRoutes = [
  implement('A46', {
    schema: { querystring: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) }) },
    handler: async (req) => {
      await accountOf(req).services.emailOAuth.email.sendVerificationCode(req.query.email, req.ip, langOfRequest(req));
      return ok();
    },
  }),
];
