import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { requirePermission, staffOf } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { BulkService } from './bulk.js';
import { DELETING_ACTIONS, manageMultiKey } from './multikey.js';
import { Ids, MultiKeyAnswer, channelErrors } from './schemas.js';
import type { ChannelService } from './service.js';

const Tag = Type.Object({ tag: Type.String({ maxLength: 255 }) });
const OptInt = Type.Optional(Type.Union([Type.Integer({ minimum: -1_000_000_000, maximum: 1_000_000_000 }), Type.Null()]));
const OptText = Type.Optional(Type.Union([Type.String({ maxLength: 1_000_000 }), Type.Null()]));

/** Tag operations, abilities repair and multi-key management. */
export function channelMoreRoutes(ctx: GatewayContext, channels: ChannelService): OperationImpl<any>[] {
  const bulk = new BulkService(ctx);
  const tagStatus = (id: 'G30' | 'G31', status: number) =>
    implement(id, {
      data: Type.Object({ tag: Type.String(), count: Type.Integer() }),
      errors: channelErrors,
      schema: { body: Tag },
      handler: async (req) => {
        const tag = req.body.tag.trim();
        if (!tag) throw new AppError('CHANNEL_TAG_REQUIRED');
        const ids = await bulk.idsOfTag(tag);
        const count = await channels.setStatus(staffOf(req), id, ids, status, { tag });
        return ok({ tag, count });
      },
    });
  return [
    implement('G13', {
      data: Type.Integer(),
      errors: channelErrors,
      schema: { body: Type.Object({ ids: Ids, tag: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]) }) },
      handler: async (req) => {
        if (req.body.ids.length === 0) throw new AppError('CHANNEL_IDS_REQUIRED');
        return ok(await bulk.batchTag(staffOf(req), req.body.ids, req.body.tag));
      },
    }),
    implement('G29', {
      data: Type.Object({ tag: Type.String(), count: Type.Integer() }),
      errors: channelErrors,
      schema: {
        body: Type.Object({
          tag: Type.String({ maxLength: 255 }),
          new_tag: OptText,
          priority: OptInt,
          weight: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()])),
          model_mapping: OptText,
          models: OptText,
          groups: OptText,
          param_override: OptText,
          header_override: OptText,
        }),
      },
      handler: async (req) => {
        if (typeof req.body.param_override === 'string' || typeof req.body.header_override === 'string') {
          requirePermission(req, 'authz.ChannelSensitiveWrite');
        }
        return ok(await bulk.editTag(staffOf(req), req.body));
      },
    }),
    tagStatus('G30', 2),
    tagStatus('G31', 1),
    implement('G32', {
      data: Type.String(),
      errors: channelErrors,
      schema: { querystring: Type.Object({ tag: Type.Optional(Type.String({ maxLength: 255 })) }) },
      handler: async (req) => {
        const tag = req.query.tag?.trim();
        if (!tag) throw new AppError('CHANNEL_TAG_REQUIRED');
        return ok(await bulk.tagModels(tag));
      },
    }),
    implement('G18', {
      data: Type.Object({ success: Type.Integer(), fails: Type.Integer() }),
      errors: channelErrors,
      handler: async (req) => ok(await bulk.fix(staffOf(req))),
    }),
    implement('G21', {
      data: MultiKeyAnswer,
      errors: channelErrors,
      schema: {
        body: Type.Object({
          channel_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
          action: Type.String({ maxLength: 64 }),
          key_index: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          page: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          page_size: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          status: Type.Optional(Type.Integer({ minimum: 0, maximum: 3 })),
        }),
      },
      handler: async (req) => {
        if (DELETING_ACTIONS.has(req.body.action)) requirePermission(req, 'authz.ChannelSensitiveWrite');
        const r = await manageMultiKey(ctx, channels, staffOf(req), req.body);
        return ok(r.data, r.message);
      },
    }),
  ];
}
