import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { identityOf } from '../auth.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { userIdSchema } from '../users/routes.js';
import { NoData } from '../../contract/types.js';
import { SessionRotation, TwoFactorSetup, moduleErrors } from '../schemas.js';
import type { TwoFactorService } from './service.js';

const userIdParams = Type.Object({ id: userIdSchema });

export function twoFactorRoutes(twoFactor: TwoFactorService, verification: ProofVerifier) {
  return [
    implement('A15', {
      data: TwoFactorSetup,
      errors: moduleErrors.twoFactor,
      rateLimit: ['security'],
      noStore: true,
      handler: async (req) => {
        const identity = identityOf(req);
        if ((await twoFactor.state(identity.userId)).enabled) throw new AppError('TWOFA_ALREADY_ENABLED');
        await requireSecurityProof(verification, req, identity, 'TwoFASetup');
        return ok(await twoFactor.beginSetup(identity));
      },
    }),

    implement('A14', {
      data: SessionRotation,
      errors: moduleErrors.twoFactor,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: Type.Object({ code: Type.String({ maxLength: 32 }), flow_token: Type.Optional(Type.String({ maxLength: 128 })) }) },
      handler: async (req) => {
        const rotation = await twoFactor.enable(identityOf(req), req.body.flow_token, req.body.code);
        return ok(rotation, 'Two-factor authentication enabled');
      },
    }),

    implement('A13', {
      data: SessionRotation,
      errors: moduleErrors.twoFactor,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: Type.Optional(Type.Object({ code: Type.Optional(Type.String({ maxLength: 32 })) })) },
      handler: async (req) => {
        const identity = identityOf(req);
        if (!(await twoFactor.state(identity.userId)).enabled) throw new AppError('TWOFA_NOT_ENABLED');
        await requireSecurityProof(verification, req, identity, 'TwoFADisable', {}, { code: req.body?.code });
        return ok(await twoFactor.disable(identity), 'Two-factor authentication disabled');
      },
    }),

    implement('A12', {
      data: Type.Object({ ...SessionRotation.properties, backup_codes: Type.Array(Type.String()) }),
      errors: moduleErrors.twoFactor,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: Type.Optional(Type.Object({ code: Type.Optional(Type.String({ maxLength: 32 })) })) },
      bodyMayBeAbsent: true,
      handler: async (req) => {
        const identity = identityOf(req);
        if (!(await twoFactor.state(identity.userId)).enabled) throw new AppError('TWOFA_NOT_ENABLED');
        await requireSecurityProof(verification, req, identity, 'TwoFABackupCodes', {}, { code: req.body?.code });
        return ok(await twoFactor.regenerateBackupCodes(identity));
      },
    }),

    implement('A17', {
      data: Type.Object({ enabled: Type.Boolean(), locked: Type.Boolean(), backup_codes_remaining: Type.Optional(Type.Integer()) }),
      errors: moduleErrors.twoFactor,
      rateLimit: ['security_read'],
      handler: async (req) => ok(await twoFactor.status(identityOf(req).userId)),
    }),

    implement('A16', {
      data: Type.Object({ total_users: Type.Integer(), enabled_users: Type.Integer(), enabled_rate: Type.String() }),
      errors: moduleErrors.twoFactor,
      handler: async (req) => ok(await twoFactor.stats()),
    }),

    implement('A18', {
      data: NoData,
      errors: [...moduleErrors.twoFactor, ...moduleErrors.admin, 'USER_TWOFA_NOT_ENABLED'],
      schema: { params: userIdParams },
      handler: async (req) => {
        await twoFactor.adminDisable(identityOf(req), req.params.id);
        return ok(undefined, 'Two-factor authentication of the user has been disabled');
      },
    }),
  ];
}
