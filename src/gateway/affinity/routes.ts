import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import type { AffinityService } from './service.js';
import { AffinityStats, AffinityUsage, gatewayErrors } from '../schemas.js';

const RuleName = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' });

/** The channel-affinity cache: usage (G60), clear (G61), statistics (G62). */
export function affinityRoutes(affinity: AffinityService): OperationImpl<any>[] {
  return [
    implement('G60', {
      data: AffinityUsage,
      errors: gatewayErrors.affinity,
      schema: { querystring: Type.Object({ rule_name: RuleName, using_group: Type.Optional(Type.String({ maxLength: 64 })), key_fp: Type.String({ pattern: '^[0-9a-f]{8}$' }) }) },
      handler: async (req) => ok(await affinity.usage(req.query)),
    }),
    implement('G61', {
      data: Type.Object({ deleted: Type.Integer() }),
      errors: gatewayErrors.affinity,
      schema: { querystring: Type.Object({ all: Type.Optional(Type.Boolean()), rule_name: Type.Optional(RuleName) }) },
      handler: async (req) => ok(await affinity.clear(staffOf(req), req.query)),
    }),
    implement('G62', { data: AffinityStats, errors: gatewayErrors.affinity, handler: async () => ok(await affinity.stats()) }),
  ];
}
