import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { ModelService } from './service.js';
import { gatewayErrors } from '../schemas.js';

/** Model discovery (G16, G17). */
export function modelRoutes(models: ModelService): OperationImpl<any>[] {
  return [
    implement('G16', {
      data: Type.Array(Type.String()),
      errors: gatewayErrors.models,
      schema: {
        body: Type.Object({
          type: Type.Integer({ minimum: 0, maximum: 1000 }),
          base_url: Type.Optional(Type.Union([Type.String({ maxLength: 2048 }), Type.Null()])),
          key: Type.String({ minLength: 1, maxLength: 65536 }),
        }),
      },
      noStore: true,
      handler: async (req) => ok(await models.fetchForInput(staffOf(req), req.body)),
    }),
    implement('G17', {
      data: Type.Array(Type.String()),
      errors: gatewayErrors.models,
      schema: { params: IdParams },
      handler: async (req) => ok(await models.fetchForChannel(staffOf(req), req.params.id)),
    }),
  ];
}
