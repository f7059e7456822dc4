import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import type { RateLimiter } from '../../kit/ratelimit/index.js';
import { staffOf } from '../auth.js';
import { KEY_READ_SCOPE, STAFF_SECRET_SCOPE, type ProofService } from './proofs.js';
import type { StaffService } from './service.js';
import { StaffProof, gatewayErrors } from '../schemas.js';

/** Attempts per staff member and window: a 6-digit code must not be guessable by trying. */
const VERIFY_LIMIT = 5;
const VERIFY_WINDOW_SECONDS = 300;

export function staffRoutes(staff: StaffService, proofs: ProofService, limiter: RateLimiter) {
  return [
    implement('GS01', {
      data: StaffProof,
      errors: gatewayErrors.staff,
      noStore: true,
      schema: {
        body: Type.Object({
          code: Type.String({ maxLength: 16 }),
          scope: Type.String({ maxLength: 64 }),
          context: Type.Optional(Type.Object({ channel_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 })) })),
        }),
      },
      handler: async (req) => {
        const me = staffOf(req);
        // channel.key.read is bound to one channel; StaffSecret to none (channel id 0).
        const channelId = req.body.scope === KEY_READ_SCOPE ? req.body.context?.channel_id : req.body.scope === STAFF_SECRET_SCOPE ? 0 : undefined;
        if (channelId === undefined) throw new AppError('GW_VERIFY_SCOPE_INVALID');
        const r = await limiter.hit(`gw-verify:${me.id}`, VERIFY_LIMIT, VERIFY_WINDOW_SECONDS);
        if (!r.allowed) throw new AppError('RATE_LIMITED', { params: { seconds: r.retryAfter }, headers: { 'Retry-After': String(r.retryAfter) } });
        if (!(await staff.verifyTotp(me.id, req.body.code.trim()))) throw new AppError('GW_VERIFY_CODE_INVALID');
        return ok(await proofs.issue(me.id, req.body.scope, channelId));
      },
    }),
  ];
}
