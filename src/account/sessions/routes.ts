import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { identityOf } from '../auth.js';
import { bearerOf, clearSessionCookies, expectedSidOf, REFRESH_COOKIE, sendSession } from './http.js';
import { parseRefreshToken, type SessionsService } from './service.js';
import { AuthBundle, SessionView, moduleErrors } from '../schemas.js';

export function sessionRoutes(sessions: SessionsService) {
  return [
    implement('A24', {
      data: AuthBundle,
      errors: moduleErrors.sessions,
      rateLimit: ['refresh'],
      handler: async (req, reply) => {
        try {
          return sendSession(req, reply, await sessions.refresh(req.cookies[REFRESH_COOKIE], expectedSidOf(req)));
        } catch (e) {
          // A mismatch or a lost race rotates, revokes and clears nothing; every other failure clears the cookie.
          if (e instanceof AppError && e.code !== 'AUTH_SESSION_MISMATCH' && e.code !== 'AUTH_REFRESH_RACE') {
            clearSessionCookies(req, reply);
          }
          throw e;
        }
      },
    }),

    implement('A23', {
      data: Type.Optional(Type.Object({ revoked_sid: Type.String(), cookie_cleared: Type.Boolean() })),
      errors: moduleErrors.sessions,
      rateLimit: ['critical'],
      handler: async (req, reply) => {
        const result = await sessions.logout({
          bearer: bearerOf(req),
          cookie: req.cookies[REFRESH_COOKIE],
          expectedSid: expectedSidOf(req),
        });
        if (result.clearCookie) clearSessionCookies(req, reply);
        if (!result.revokedSid) return ok();
        return ok({ revoked_sid: result.revokedSid, cookie_cleared: result.clearCookie });
      },
    }),

    implement('A43', {
      data: Type.Array(SessionView),
      errors: moduleErrors.sessions,
      handler: async (req) => ok(await sessions.list(identityOf(req))),
    }),

    implement('A44', {
      data: Type.Object({ revoked_sid: Type.String(), current: Type.Boolean() }),
      errors: moduleErrors.sessions,
      schema: { params: Type.Object({ sid: Type.String({ maxLength: 64 }) }) },
      handler: async (req, reply) => {
        const sid = req.params.sid.trim();
        if (!sid) throw new AppError('AUTH_SESSION_ID_REQUIRED');
        const result = await sessions.revokeOwn(identityOf(req), sid);
        if (parseRefreshToken(req.cookies[REFRESH_COOKIE])?.sid === sid) clearSessionCookies(req, reply);
        return ok(result);
      },
    }),

    implement('A45', {
      data: Type.Object({ revoked_count: Type.Integer() }),
      errors: moduleErrors.sessions,
      handler: async (req) => {
        const revoked = await sessions.revokeOthers(identityOf(req));
        return ok({ revoked_count: revoked });
      },
    }),
  ];
}
