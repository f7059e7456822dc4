import { Type } from '@sinclair/typebox';
import { implement, NoData } from '../../../contract/types.js';
import { ok } from '../../../kit/http/envelope.js';
import { identityOf } from '../../auth.js';
import { EDGE_ERRORS, EDGE_WRITE_ERRORS } from '../edge.js';
import { PageOf, pagingQuery } from '../paging.js';
import { Topup, TopupCode } from '../schemas.js';
import type { TopupService } from './service.js';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Whole = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
const code = {
  name: Type.Optional(Type.String({ maxLength: 1000 })),
  quota: Type.Optional(Whole),
  expired_time: Type.Optional(Whole),
};
const CODE_ERRORS = [...EDGE_ERRORS, 'TOPUP_CODE_NOT_FOUND'];

/** Top-up: the customer's redemption and history (AP17, AP18) and the admin's codes (AS09–AS13, AS56, AS57), as new-api. */
export function topupRoutes(topup: TopupService) {
  return [
    implement('AP17', {
      data: PageOf(Topup),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object(pagingQuery) },
      handler: async (req) => ok(await topup.topups(identityOf(req).userId, req.query)),
    }),

    implement('AP18', {
      data: Type.Integer({ description: 'the units credited' }),
      errors: [...EDGE_WRITE_ERRORS, 'TOPUP_CODE_INVALID'],
      rateLimit: ['critical'],
      schema: { body: Type.Object({ key: Type.Optional(Type.String({ maxLength: 1024 })) }) },
      handler: async (req) => ok(await topup.redeem(identityOf(req).userId, req.body.key ?? '')),
    }),

    implement('AS09', {
      data: PageOf(TopupCode),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object(pagingQuery) },
      handler: async (req) => ok(await topup.codes(req.query)),
    }),

    implement('AS10', {
      data: PageOf(TopupCode),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...pagingQuery, keyword: Type.Optional(Type.String({ maxLength: 100 }))}) },
      handler: async (req) => ok(await topup.codes(req.query)),
    }),

    implement('AS11', {
      data: Type.Array(Type.String(), { description: 'the new codes, shown in this answer only' }),
      errors: EDGE_ERRORS,
      schema: { body: Type.Object({ ...code, count: Type.Optional(Whole) }) },
      handler: async (req) => ok(await topup.create(identityOf(req).userId, req.body)),
    }),

    implement('AS12', {
      data: TopupCode,
      errors: CODE_ERRORS,
      schema: {
        querystring: Type.Object({ status_only: Type.Optional(Type.String({ maxLength: 10 })) }),
        body: Type.Object({ id: Id, status: Type.Optional(Whole), ...code }),
      },
      handler: async (req) => ok(await topup.update(identityOf(req).userId, req.body, Boolean(req.query.status_only))),
    }),

    implement('AS56', {
      data: TopupCode,
      errors: CODE_ERRORS,
      schema: { params: Type.Object({ id: Id }) },
      handler: async (req) => ok(await topup.code(req.params.id)),
    }),

    implement('AS57', {
      data: Type.Integer({ description: 'how many codes were deleted' }),
      errors: EDGE_ERRORS,
      handler: async (req) => ok(await topup.removeInvalid(identityOf(req).userId)),
    }),

    implement('AS13', {
      data: NoData,
      errors: CODE_ERRORS,
      schema: { params: Type.Object({ id: Id }) },
      handler: async (req) => {
        await topup.remove(identityOf(req).userId, req.params.id);
        return ok();
      },
    }),
  ];
}
