import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { identityOf } from '../auth.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { langOfRequest } from '../email/routes.js';
import { userIdSchema as userId } from '../users/routes.js';
import { NoData } from '../../contract/types.js';
import { OAuthBinding, moduleErrors } from '../schemas.js';
import type { BindingsService } from './service.js';
import type { UsersService } from '../users/service.js';
import type { EmailService } from '../email/service.js';

const providerId = Type.String({ minLength: 1, maxLength: 64 });

export function bindingRoutes(bindings: BindingsService, users: UsersService, email: EmailService, verification: ProofVerifier) {
  return [
    implement('A31', {
      data: Type.Array(OAuthBinding),
      errors: moduleErrors.bindings,
      handler: async (req) => ok(await bindings.list(identityOf(req).userId)),
    }),

    implement('A32', {
      data: Type.Object({ provider_id: Type.String(), notification_warning: Type.Boolean() }),
      errors: moduleErrors.bindings,
      rateLimit: ['critical'],
      schema: { params: Type.Object({ provider_id: providerId }) },
      handler: async (req) => {
        const identity = identityOf(req);
        const id = req.params.provider_id.toLowerCase();
        await requireSecurityProof(verification, req, identity, 'AccountUnbind', { provider_id: id });
        const { user, kind } = await bindings.unbind(identity.userId, id, true);
        const warning = await email.notify(user.email, `${kind.name} account unbound`, langOfRequest(req));
        return ok({ provider_id: id, notification_warning: warning });
      },
    }),

    implement('A20', {
      data: Type.Array(OAuthBinding),
      errors: moduleErrors.bindings,
      schema: { params: Type.Object({ id: userId }) },
      handler: async (req) => {
        await users.requireOutrank(identityOf(req), req.params.id);
        return ok(await bindings.list(req.params.id));
      },
    }),

    implement('A21', {
      data: NoData,
      errors: moduleErrors.bindings,
      schema: { params: Type.Object({ id: userId, provider_id: providerId }) },
      handler: async (req) => {
        await users.requireOutrank(identityOf(req), req.params.id);
        await bindings.unbind(req.params.id, req.params.provider_id.toLowerCase(), false);
        return ok();
      },
    }),

    implement('A19', {
      data: Type.Object({ bindingType: Type.String(), username: Type.String() }),
      errors: moduleErrors.bindings,
      schema: { params: Type.Object({ id: userId, binding_type: Type.String({ minLength: 1, maxLength: 32 }) }) },
      handler: async (req) => {
        await users.requireOutrank(identityOf(req), req.params.id);
        const type = req.params.binding_type.toLowerCase();
        const user = await bindings.clear(req.params.id, type);
        return ok({ bindingType: type, username: user.username }, 'success');
      },
    }),
  ];
}
