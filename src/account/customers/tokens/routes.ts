import { Type } from '@sinclair/typebox';
import { implement, NoData } from '../../../contract/types.js';
import { ok } from '../../../kit/http/envelope.js';
import { identityOf } from '../../auth.js';
import { EDGE_ERRORS, EDGE_WRITE_ERRORS } from '../edge.js';
import { PageOf, pagingQuery } from '../paging.js';
import { CreatedToken, CustomerToken } from '../schemas.js';
import type { TokensService } from './service.js';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Whole = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });

/** A token's settings as new-api's dashboard sends them; its other fields (key, status, auto_groups…) are not read. */
const settings = {
  name: Type.Optional(Type.String()),
  expired_time: Type.Optional(Whole),
  remain_quota: Type.Optional(Whole),
  unlimited_quota: Type.Optional(Type.Boolean()),
  model_limits_enabled: Type.Optional(Type.Boolean()),
  model_limits: Type.Optional(Type.String()),
  allow_ips: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  group: Type.Optional(Type.String()),
};

const Ids = Type.Object({ ids: Type.Array(Id) });
const params = Type.Object({ id: Id });
const TOKEN_ERRORS = [...EDGE_ERRORS, 'TOKEN_NOT_FOUND'];
const REVEAL_ERRORS = [...TOKEN_ERRORS, 'TOKEN_KEY_ALREADY_SHOWN'];

/** new-api's token routes (AP01–AP09): the caller's own tokens only, named by the authenticated user. */
export function tokenRoutes(tokens: TokensService) {
  return [
    implement('AP01', {
      data: PageOf(CustomerToken),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object(pagingQuery) },
      handler: async (req) => ok(await tokens.list(identityOf(req).userId, req.query)),
    }),

    implement('AP02', {
      data: PageOf(CustomerToken),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...pagingQuery, keyword: Type.Optional(Type.String({ maxLength: 100 })), token: Type.Optional(Type.String({ maxLength: 200 })) }) },
      handler: async (req) => ok(await tokens.search(identityOf(req).userId, req.query)),
    }),

    implement('AP03', {
      data: CustomerToken,
      errors: TOKEN_ERRORS,
      schema: { params },
      handler: async (req) => ok(await tokens.get(identityOf(req).userId, req.params.id)),
    }),

    implement('AP04', {
      data: Type.Object({ key: Type.String() }),
      errors: REVEAL_ERRORS,
      rateLimit: ['critical'],
      schema: { params },
      handler: async (req) => ok(await tokens.revealKey(identityOf(req).userId, req.params.id)),
    }),

    implement('AP05', {
      data: CreatedToken,
      errors: EDGE_WRITE_ERRORS,
      schema: { body: Type.Object(settings) },
      handler: async (req) => ok(await tokens.create(identityOf(req).userId, req.body)),
    }),

    implement('AP06', {
      data: CustomerToken,
      errors: TOKEN_ERRORS,
      schema: {
        querystring: Type.Object({ status_only: Type.Optional(Type.String({ maxLength: 10 })) }),
        body: Type.Object({ id: Id, status: Type.Optional(Whole), ...settings }),
      },
      // new-api's rule: any non-empty status_only changes the status alone.
      handler: async (req) => ok(await tokens.update(identityOf(req).userId, req.body, Boolean(req.query.status_only))),
    }),

    implement('AP07', {
      data: NoData,
      errors: TOKEN_ERRORS,
      schema: { params },
      handler: async (req) => {
        await tokens.remove(identityOf(req).userId, req.params.id);
        return ok();
      },
    }),

    implement('AP08', {
      data: Type.Integer({ description: 'how many of the caller\'s tokens were deleted' }),
      errors: EDGE_ERRORS,
      schema: { body: Ids },
      handler: async (req) => ok(await tokens.removeMany(identityOf(req).userId, req.body.ids)),
    }),

    implement('AP09', {
      data: Type.Object({ keys: Type.Record(Type.String(), Type.String()) }),
      errors: REVEAL_ERRORS,
      rateLimit: ['critical'],
      schema: { body: Ids },
      handler: async (req) => ok(await tokens.revealKeys(identityOf(req).userId, req.body.ids)),
    }),
  ];
}
