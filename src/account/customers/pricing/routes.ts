import { Type } from '@sinclair/typebox';
import { implement } from '../../../contract/types.js';
import { ok } from '../../../kit/http/envelope.js';
import { identityOf } from '../../auth.js';
import { EDGE_ERRORS } from '../edge.js';
import { ModelPrice, UserGroups } from '../schemas.js';
import type { PricingService } from './service.js';

/** Prices and models (AP29–AP42) with new-api's paths and fields. */
export function pricingRoutes(pricing: PricingService) {
  return [
    implement('AP29', {
      data: Type.Array(Type.String()),
      errors: [...EDGE_ERRORS, 'MODEL_GROUP_DENIED'],
      // new-api's `auto` group is not offered here (no auto groups): refused like any group not the caller's.
      schema: { querystring: Type.Object({ group: Type.Optional(Type.String({ maxLength: 64 })) }) },
      handler: async (req) => ok(await pricing.models(identityOf(req).userId, req.query.group)),
    }),

    implement('AP30', {
      data: UserGroups,
      errors: EDGE_ERRORS,
      handler: async (req) => ok(await pricing.groups(identityOf(req).userId)),
    }),

    // Public as new-api's default; a signed-in caller sees the ratio of their own group. new-api's
    // group_ratio, usable_group, vendors, supported_endpoint and auto_groups sit beside `data`.
    implement('AP42', {
      data: Type.Array(ModelPrice),
      errors: EDGE_ERRORS,
      handler: async (req) => pricing.pricing(req.accountIdentity?.userId),
    }),
  ];
}
