import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { insertedId, isUniqueViolation } from '../../kit/db/index.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import { audit } from '../audit/store.js';
import { staffOf } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds, type PrefillGroupTable } from '../db.js';
import { NoData } from '../../contract/types.js';
import { PrefillGroup, gatewayErrors } from '../schemas.js';

const Fields = {
  name: Type.String({ maxLength: 64 }),
  type: Type.String({ maxLength: 32 }),
  items: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 1024 }), { maxItems: 10000 }), Type.String({ maxLength: 1_000_000 })])),
  description: Type.Optional(Type.String({ maxLength: 255 })),
};

/** The table's columns (on MySQL it also holds the generated column of its unique index, not shown). */
const COLUMNS = ['id', 'name', 'type', 'items', 'description', 'created_time', 'updated_time', 'deleted_at'] as const;

function viewOf(r: PrefillGroupTable) {
  let items: unknown = [];
  try {
    items = JSON.parse(r.items);
  } catch {
    items = [];
  }
  const { deleted_at: _d, ...rest } = r;
  return { ...rest, items };
}

/** Items arrive as an array or as its JSON text (the reference stores JSON); both become a string array. */
function itemsOf(v: string[] | string | undefined): string {
  if (v === undefined) return '[]';
  let arr: unknown = v;
  if (typeof v === 'string') {
    try {
      arr = v.trim() === '' ? [] : JSON.parse(v);
    } catch {
      throw new AppError('INVALID_PARAMETERS', { params: { detail: 'items must be a JSON array of strings' } });
    }
  }
  if (!Array.isArray(arr) || arr.some((x) => typeof x !== 'string')) throw new AppError('INVALID_PARAMETERS', { params: { detail: 'items must be a JSON array of strings' } });
  return JSON.stringify(arr);
}

export function prefillRoutes(ctx: GatewayContext) {
  const live = () => ctx.db.selectFrom('prefill_groups').where('deleted_at', 'is', null);
  const unique = async <T>(fn: () => Promise<T>) => {
    try {
      return await fn();
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('PREFILL_GROUP_NAME_TAKEN');
      throw e;
    }
  };
  return [
    implement('G78', {
      data: Type.Array(PrefillGroup),
      errors: gatewayErrors.prefill,
      schema: { querystring: Type.Object({ type: Type.Optional(Type.String({ maxLength: 32 })) }) },
      handler: async (req) => {
        let q = live().select(COLUMNS).orderBy('updated_time', 'desc').orderBy('id', 'desc');
        if (req.query.type) q = q.where('type', '=', req.query.type);
        return ok((await q.execute()).map(viewOf));
      },
    }),
    implement('G79', {
      data: PrefillGroup,
      errors: gatewayErrors.prefill,
      schema: { body: Type.Object(Fields) },
      handler: async (req) => {
        const name = req.body.name.trim();
        const type = req.body.type.trim();
        if (!name || !type) throw new AppError('PREFILL_GROUP_INVALID');
        const now = nowSeconds();
        const values = { name, type, items: itemsOf(req.body.items), description: req.body.description ?? '', created_time: now, updated_time: now, deleted_at: null };
        const row = await unique(() =>
          ctx.db.transaction().execute(async (trx) => {
            const id = await insertedId(trx, trx.insertInto('prefill_groups').values(values as never));
            await audit(trx, staffOf(req), 'G79', null, { prefill_group_id: id, name });
            return trx.selectFrom('prefill_groups').select(COLUMNS).where('id', '=', id).executeTakeFirstOrThrow();
          }),
        );
        return ok(viewOf(row));
      },
    }),
    implement('G80', {
      data: PrefillGroup,
      errors: gatewayErrors.prefill,
      schema: { body: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }), ...Fields }) },
      handler: async (req) => {
        const name = req.body.name.trim();
        const type = req.body.type.trim();
        if (!name || !type) throw new AppError('PREFILL_GROUP_INVALID');
        const row = await unique(() =>
          ctx.db.transaction().execute(async (trx) => {
            const u = await trx
              .updateTable('prefill_groups')
              .set({ name, type, items: itemsOf(req.body.items), description: req.body.description ?? '', updated_time: nowSeconds() })
              .where('id', '=', req.body.id)
              .where('deleted_at', 'is', null)
              .executeTakeFirst();
            if (Number(u.numUpdatedRows) === 0) throw new AppError('PREFILL_GROUP_NOT_FOUND');
            const r = await trx.selectFrom('prefill_groups').select(COLUMNS).where('id', '=', req.body.id).executeTakeFirstOrThrow();
            await audit(trx, staffOf(req), 'G80', null, { prefill_group_id: req.body.id, name });
            return r;
          }),
        );
        return ok(viewOf(row));
      },
    }),
    implement('G81', {
      data: NoData,
      errors: gatewayErrors.prefill,
      schema: { params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) }) },
      handler: async (req) => {
        await ctx.db.transaction().execute(async (trx) => {
          const r = await trx.updateTable('prefill_groups').set({ deleted_at: nowSeconds() }).where('id', '=', req.params.id).where('deleted_at', 'is', null).executeTakeFirst();
          if (Number(r.numUpdatedRows) === 0) throw new AppError('PREFILL_GROUP_NOT_FOUND');
          await audit(trx, staffOf(req), 'G81', null, { prefill_group_id: req.params.id });
        });
        return ok();
      },
    }),
  ];
}
