import { Type } from '@sinclair/typebox';
import { implement } from '../../../contract/types.js';
import { ok } from '../../../kit/http/envelope.js';
import { identityOf } from '../../auth.js';
import { EDGE_ERRORS } from '../edge.js';
import { PageOf, pagingQuery } from '../paging.js';
import { CustomerLog, LogStat, UsageBucket } from '../schemas.js';
import type { UsageService } from './service.js';

const Seconds = Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }));
const Name = Type.Optional(Type.String({ maxLength: 200 }));

/** new-api's log filters (its `group`, `request_id`, `upstream_request_id` and `channel` are not kept: ignored like any unknown query). */
const filters = {
  type: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  token_name: Name,
  model_name: Name,
  start_timestamp: Seconds,
  end_timestamp: Seconds,
};
const username = { username: Name };
const range = { start_timestamp: Seconds, end_timestamp: Seconds };

/** Usage: the caller's own (AP10–AP13) and every user's for admins (AS14–AS16), with new-api's paths and fields. */
export function usageRoutes(usage: UsageService) {
  return [
    implement('AP10', {
      data: PageOf(CustomerLog),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...pagingQuery, ...filters }) },
      handler: async (req) => ok(await usage.selfLogs(identityOf(req).userId, req.query)),
    }),

    implement('AP11', {
      data: LogStat,
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object(filters) },
      handler: async (req) => ok(await usage.selfStat(identityOf(req).userId, req.query)),
    }),

    implement('AP13', {
      data: Type.Array(UsageBucket),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object(range) },
      handler: async (req) => ok(await usage.selfUsage(identityOf(req).userId, req.query)),
    }),

    implement('AS14', {
      data: PageOf(CustomerLog),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...pagingQuery, ...filters, ...username }) },
      handler: async (req) => ok(await usage.allLogs(req.query)),
    }),

    implement('AS15', {
      data: LogStat,
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...filters, ...username }) },
      handler: async (req) => ok(await usage.allStat(req.query)),
    }),

    implement('AS16', {
      data: Type.Array(UsageBucket),
      errors: EDGE_ERRORS,
      schema: { querystring: Type.Object({ ...range, ...username }) },
      handler: async (req) => ok(await usage.allUsage(req.query)),
    }),
  ];
}
