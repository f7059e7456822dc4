import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import type { RatioSyncService } from './service.js';
import { RatioComparison, RatioSource, gatewayErrors } from '../schemas.js';

/** Ratio sync: sources (G82), fetch and compare (G83). */
export function ratioSyncRoutes(ratios: RatioSyncService): OperationImpl<any>[] {
  return [
    implement('G82', { data: Type.Array(RatioSource), errors: gatewayErrors.ratioSync, handler: async () => ok(await ratios.sources()) }),
    implement('G83', {
      data: RatioComparison,
      errors: gatewayErrors.ratioSync,
      schema: {
        body: Type.Object({
          channel_ids: Type.Optional(Type.Array(Type.Integer({ minimum: -101, maximum: 2 ** 53 - 1 }), { maxItems: 50 })),
          upstreams: Type.Optional(
            Type.Array(
              Type.Object({
                id: Type.Optional(Type.Integer()),
                name: Type.String({ minLength: 1, maxLength: 128 }),
                base_url: Type.String({ minLength: 1, maxLength: 2048 }),
                endpoint: Type.Optional(Type.String({ maxLength: 512 })),
              }),
              { maxItems: 50 },
            ),
          ),
          timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
          // SPEC lists these as conditionally required body keys (an earlier answer sent back); ignored.
          success: Type.Optional(Type.Boolean()),
          data: Type.Optional(Type.Unknown()),
          message: Type.Optional(Type.String({ maxLength: 4096 })),
        }),
      },
      handler: async (req) => ok(await ratios.fetch(staffOf(req), req.body)),
    }),
  ];
}
