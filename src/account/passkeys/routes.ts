import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { clientInfo, sendSession } from '../sessions/http.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { userIdSchema } from '../users/routes.js';
import { AuthBundle, PasskeyChallenge, SecurityProof, SessionRotation, moduleErrors } from '../schemas.js';
import type { PasskeysService } from './service.js';

const token = Type.Optional(Type.String({ maxLength: 128 }));
const rpId = Type.Optional(Type.String({ maxLength: 255 }));
/** The browser's PublicKeyCredential JSON (opaque to SPEC; checked by the WebAuthn library). */
const credential = Type.Optional(Type.Unknown());

export function passkeyRoutes(passkeys: PasskeysService, verification: ProofVerifier) {
  return [
    implement('A34', {
      data: Type.Object({ enabled: Type.Boolean(), last_used_at: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) }),
      errors: moduleErrors.passkeys,
      rateLimit: ['security_read'],
      handler: async (req) => ok(await passkeys.status(identityOf(req).userId)),
    }),

    implement('A37', {
      data: PasskeyChallenge,
      errors: moduleErrors.passkeys,
      rateLimit: ['security'],
      schema: { body: Type.Optional(Type.Object({ rp_id: rpId })) },
      bodyMayBeAbsent: true,
      handler: async (req) => {
        const { config } = accountOf(req);
        if (!config.passkey.enabled) throw new AppError('PASSKEY_DISABLED');
        const identity = identityOf(req);
        await requireSecurityProof(verification, req, identity, 'PasskeyRegister');
        return ok(await passkeys.beginRegister(identity, req.body?.rp_id));
      },
    }),

    implement('A38', {
      data: SessionRotation,
      errors: moduleErrors.passkeys,
      rateLimit: ['security'],
      schema: { body: Type.Object({ flow_token: token, credential }) },
      handler: async (req) => {
        const rotation = await passkeys.finishRegister(identityOf(req), req.body.flow_token, req.body.credential);
        return ok(rotation, 'Passkey registered');
      },
    }),

    implement('A33', {
      data: SessionRotation,
      errors: moduleErrors.passkeys,
      rateLimit: ['security'],
      handler: async (req) => {
        const identity = identityOf(req);
        if (!(await passkeys.registered(identity.userId))) throw new AppError('PASSKEY_NOT_REGISTERED');
        await requireSecurityProof(verification, req, identity, 'PasskeyDelete');
        return ok(await passkeys.remove(identity), 'Passkey removed');
      },
    }),

    implement('A22', {
      data: Type.Object({ id: Type.Integer(), username: Type.String() }),
      errors: [...moduleErrors.passkeys, ...moduleErrors.admin],
      schema: { params: Type.Object({ id: userIdSchema }) },
      handler: async (req) => ok(await passkeys.adminReset(identityOf(req), req.params.id), 'Passkey reset'),
    }),

    implement('A35', {
      data: PasskeyChallenge,
      errors: moduleErrors.passkeys,
      rateLimit: ['critical'],
      schema: { body: Type.Optional(Type.Object({ rp_id: rpId })) },
      bodyMayBeAbsent: true,
      handler: async (req) => ok(await passkeys.beginLogin(req.body?.rp_id)),
    }),

    implement('A36', {
      data: AuthBundle,
      errors: moduleErrors.passkeys,
      rateLimit: ['critical'],
      schema: { body: Type.Object({ flow_token: token, credential }) },
      handler: async (req, reply) => {
        const issued = await passkeys.finishLogin(req.body.flow_token, req.body.credential, clientInfo(req));
        return sendSession(req, reply, issued);
      },
    }),

    implement('A28', {
      data: PasskeyChallenge,
      errors: moduleErrors.passkeys,
      rateLimit: ['critical'],
      schema: { body: Type.Object({ flow_token: token, rp_id: rpId }) },
      handler: async (req) => ok(await passkeys.beginSecondStep(req.body.flow_token, req.body.rp_id)),
    }),

    implement('A29', {
      data: AuthBundle,
      errors: moduleErrors.passkeys,
      rateLimit: ['critical'],
      schema: { body: Type.Object({ flow_token: token, passkey_flow_token: token, credential }) },
      handler: async (req, reply) => {
        const { flow_token, passkey_flow_token } = req.body;
        const issued = await passkeys.finishSecondStep(flow_token, passkey_flow_token, req.body.credential, clientInfo(req));
        return sendSession(req, reply, issued);
      },
    }),

    implement('A39', {
      data: PasskeyChallenge,
      errors: moduleErrors.passkeys,
      rateLimit: ['security'],
      schema: {
        body: Type.Object({ scope: Type.Optional(Type.String({ maxLength: 64 })), context: Type.Optional(Type.Unknown()), rp_id: rpId }, { additionalProperties: false }),
      },
      handler: async (req) => ok(await passkeys.beginStepUp(identityOf(req), req.body)),
    }),

    implement('A40', {
      data: SecurityProof,
      errors: moduleErrors.passkeys,
      rateLimit: ['security'],
      noStore: true,
      schema: { body: Type.Object({ flow_token: token, credential }) },
      handler: async (req) => ok(await passkeys.finishStepUp(identityOf(req), req.body.flow_token, req.body.credential)),
    }),
  ];
}
