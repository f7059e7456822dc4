import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { clientInfo, sendSession } from '../sessions/http.js';
import { sendChallenge } from '../login/pending-login.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { baseUrlOf, langOfRequest } from '../email/routes.js';
import { OAuthCallbackResult, moduleErrors } from '../schemas.js';
import type { OAuthService } from './service.js';

const short = (max: number) => Type.Optional(Type.String({ maxLength: max }));

export function oauthRoutes(oauth: OAuthService, verification: ProofVerifier) {
  return [
    implement('A05', {
      data: Type.Object({ flow_token: Type.String(), expires_at: Type.Integer(), authorization_url: Type.String() }),
      errors: moduleErrors.oauth,
      rateLimit: ['critical'],
      schema: {
        body: Type.Object({
          provider: Type.String({ minLength: 1, maxLength: 64 }),
          intent: Type.String({ maxLength: 16 }),
          aff: short(64),
          scope: short(64),
          context: Type.Optional(Type.Unknown()),
        }),
      },
      handler: async (req) => {
        const identity = req.accountIdentity;
        const slug = req.body.provider.trim().toLowerCase();
        if (req.body.intent === 'bind' && identity?.sid) {
          oauth.provider(slug);
          await requireSecurityProof(verification, req, identity, 'AccountBind', { provider: slug });
        }
        return ok(await oauth.start({ ...req.body, provider: slug }, identity, baseUrlOf(req)));
      },
    }),

    implement('A01', {
      data: OAuthCallbackResult,
      errors: moduleErrors.oauth,
      rateLimit: ['critical'],
      schema: {
        params: Type.Object({ provider: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({
          state: short(256),
          code: short(2048),
          error: short(256),
          error_description: short(1024),
          iss: short(1024),
        }),
      },
      handler: async (req, reply) => {
        const outcome = await oauth.callback(req.params.provider.toLowerCase(), req.query, req.accountIdentity, clientInfo(req), langOfRequest(req));
        if (outcome.kind === 'bind') return ok(outcome.data, 'Binding successful');
        if (outcome.kind === 'verify') return ok(outcome.data);
        if (outcome.kind === 'challenge') return sendChallenge(req, reply, outcome.data);
        return sendSession(req, reply, outcome.issued);
      },
    }),
  ];
}
