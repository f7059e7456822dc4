import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { baseUrlOf } from '../email/routes.js';
import { setupState, systemStatus } from './status.js';
import { SelfProfile, SessionRotation, SystemStatus, moduleErrors } from '../schemas.js';
import type { SelfService } from './self.js';
import type { OAuthService } from '../oauth/service.js';

/** The body of the reference's PUT /api/user/self that this service acts on (its other settings are not kept). */
const selfUpdateBody = Type.Object(
  {
    display_name: Type.Optional(Type.String({ maxLength: 256 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    original_password: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);

/** What new-api's dashboard reads to sign in and show the profile page (AS01–AS04, additions). */
export function dashboardRoutes(self: SelfService, oauth: Pick<OAuthService, 'providers'>) {
  return [
    implement('AS01', {
      data: SystemStatus,
      handler: async (req) => {
        return ok(await systemStatus(accountOf(req).config, oauth.providers, baseUrlOf(req)));
      },
    }),

    implement('AS02', {
      data: Type.Object({ status: Type.Boolean(), root_init: Type.Boolean(), database_type: Type.String() }),
      handler: async () => ok(setupState()),
    }),

    implement('AS03', {
      data: SelfProfile,
      handler: async (req) => ok(await self.profile(identityOf(req))),
    }),

    implement('AS04', {
      data: Type.Optional(SessionRotation),
      errors: moduleErrors.self,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: selfUpdateBody },
      handler: async (req) => ok(await self.update(identityOf(req), req.body)),
    }),
  ];
}
