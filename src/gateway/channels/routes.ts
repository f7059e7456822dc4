import { Type, type Static } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { jsonWithRaw, ok } from '../../kit/http/envelope.js';
import type { FastifyReply } from 'fastify';
import { requirePermission, securityProofOf, staffOf } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { once } from '../idempotency.js';
import { KEY_READ_SCOPE, type ProofService } from '../staff/proofs.js';
import type { ChannelService } from './service.js';
import { ChannelFields, ChannelPage, ChannelView, IdParams, Ids, ListQuery, channelErrors } from './schemas.js';
import { RefreshingCache } from '../../kit/cache/refreshing-cache.js';
import { countChannels, countTags, keyPrioritiesExact, pageQuery, SORTABLE, tagPageQuery, typeCounts, type ListFilter, type SortBy } from './store.js';
import { PLAIN_FIELDS, IGNORED_FIELDS } from './validate.js';
import { itemsJson } from './items-json.js';
import { keywordIndexQuery, keywordWindow } from './keyword.js';

type Query = Static<typeof ListQuery>;

/** Orders an index of channels walks (migrations 0001 and 0005); the others sort every matching row. */
const INDEXED_SORTS = new Set<SortBy>(['id', 'priority', 'name']);

function filterOf(q: Query, search: boolean): ListFilter {
  const status = q.status === 'enabled' || q.status === '1' ? 'enabled' : q.status === 'disabled' || q.status === '0' ? 'disabled' : undefined;
  return {
    status,
    type: q.type !== undefined && q.type >= 0 ? q.type : undefined,
    group: q.group?.trim() || undefined,
    keyword: search ? q.keyword?.trim() || undefined : undefined,
    model: search ? q.model?.trim() || undefined : undefined,
  };
}

function sortOf(q: Query): { by: SortBy; dir: 'asc' | 'desc' } {
  if (q.sort_by && (SORTABLE as readonly string[]).includes(q.sort_by)) return { by: q.sort_by as SortBy, dir: q.sort_order === 'asc' ? 'asc' : 'desc' };
  return q.id_sort || q.sort_by ? { by: 'id', dir: 'desc' } : { by: 'priority', dir: 'desc' };
}

/** G01 and G27 share one SQL-paginated listing; G27 adds keyword and model filters. */
async function listing(ctx: GatewayContext, q: Query, search: boolean, reply: FastifyReply) {
  const page = Math.max(1, q.p ?? 1);
  const requested = q.page_size ?? q.ps ?? q.size ?? (search ? 20 : 10);
  const pageSize = Math.min(100, requested < 1 ? (search ? 20 : 10) : requested);
  const f = filterOf(q, search);
  const offset = (page - 1) * pageSize;
  const sort = sortOf(q);
  if (f.keyword) f.keywordMatch = await keywordIndexQuery(ctx.db, f.keyword);
  if (f.keywordMatch) f.keywordOrdered = await keyPrioritiesExact(ctx.db);
  if (f.keyword && !q.tag_mode) f.keywordWindow = await keywordWindow(ctx.db, f.keyword, offset + pageSize, INDEXED_SORTS.has(sort.by));
  const counts = await cachedCounts(ctx, f, !!q.tag_mode);
  // The cached total (maybe stale) chooses the cheaper end to count the offset from; on PostgreSQL and
  // MySQL it also places the end (see pageQuery).
  const fromEnd = offset > counts.total / 2;
  const rows = q.tag_mode ? await tagPageQuery(ctx.db, f, pageSize, offset) : pageQuery(ctx.db, f, sort, pageSize, offset, fromEnd, counts.total);
  // An unfiltered page in an indexed order walks only index entries up to its offset (from the nearer
  // end); anything else may scan or sort many rows.
  const cheap = !q.tag_mode && INDEXED_SORTS.has(sort.by) && Object.values(f).every((v) => v === undefined);
  const items = await itemsJson(ctx.db, rows, !cheap);
  // The items arrive as JSON text: the body is written here and sent as is.
  reply.type('application/json; charset=utf-8');
  return jsonWithRaw(ok({ items, total: counts.total, page, page_size: pageSize, type_counts: counts.type_counts }));
}

/**
 * Totals and per-type counts scan every matching row, so they are computed at most once per
 * COUNT_FRESH_MS per filter; for another COUNT_FRESH_MS the last counts are still answered while new
 * ones are computed in the background, so a listing rarely waits for them. Dropped whenever this
 * instance writes a channel (another instance's writes show within 2 × COUNT_FRESH_MS).
 */
const COUNT_FRESH_MS = 2000;
type Counts = { total: number; type_counts: Record<string, number> };
const countCaches = new WeakMap<GatewayContext, RefreshingCache<string, Counts>>();

function sum(values: number[]) {
  return values.reduce((a, b) => a + b, 0);
}

export function clearCountCache(ctx: GatewayContext) {
  countCaches.get(ctx)?.clear();
}

function cachedCounts(ctx: GatewayContext, f: ListFilter, tagMode: boolean): Promise<Counts> {
  let cache = countCaches.get(ctx);
  if (!cache) countCaches.set(ctx, (cache = new RefreshingCache(COUNT_FRESH_MS, 2 * COUNT_FRESH_MS)));
  const key = JSON.stringify([f.status, f.type, f.group, f.keyword, f.model, tagMode]);
  return cache.get(key, async () => {
    const type_counts = await typeCounts(ctx.db, f);
    // Without a type filter the per-type counts add up to the total: no second pass over the rows.
    const total = tagMode ? await countTags(ctx.db, f) : f.type === undefined ? sum(Object.values(type_counts)) : await countChannels(ctx.db, f);
    return { total, type_counts };
  });
}

export function channelRoutes(ctx: GatewayContext, channels: ChannelService, proofs: ProofService) {
  return [
    implement('G01', {
      data: ChannelPage,
      errors: channelErrors,
      schema: { querystring: ListQuery },
      handler: async (req, reply) => listing(ctx, req.query, false, reply),
    }),
    implement('G27', {
      data: ChannelPage,
      errors: channelErrors,
      schema: { querystring: ListQuery },
      handler: async (req, reply) => listing(ctx, req.query, true, reply),
    }),
    implement('G05', {
      data: ChannelView,
      errors: channelErrors,
      schema: { params: IdParams },
      handler: async (req) => ok(await channels.get(req.params.id)),
    }),

    implement('G02', {
      data: Type.Object({ count: Type.Integer(), ids: Type.Array(Type.Integer()), mode: Type.String() }),
      errors: channelErrors,
      schema: {
        body: Type.Object({
          mode: Type.String({ maxLength: 32 }),
          multi_key_mode: Type.Optional(Type.String({ maxLength: 32 })),
          batch_add_set_key_prefix_2_name: Type.Optional(Type.Boolean()),
          channel: Type.Object(ChannelFields),
        }),
      },
      handler: async (req) => {
        const actor = staffOf(req);
        const result = await once(ctx, req, actor.id, 'G02', (trx) => channels.create(actor, req.body, trx));
        return ok({ count: result.count, ids: result.ids, mode: req.body.mode });
      },
    }),

    implement('G03', {
      data: Type.Object({ ...ChannelView.properties, changed_fields: Type.Array(Type.String()) }),
      errors: channelErrors,
      schema: {
        body: Type.Object({
          id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
          key_mode: Type.Optional(Type.Union([Type.Literal('append'), Type.Literal('replace')])),
          multi_key_mode: Type.Optional(Type.String({ maxLength: 32 })),
          ...ChannelFields,
        }),
      },
      handler: async (req) => {
        const body = req.body as Record<string, unknown>;
        // ChannelWrite covers the plain fields; anything else written (key, type, URLs, overrides,
        // unknown fields) needs ChannelSensitiveWrite, failing closed.
        const sensitive = Object.keys(body).some((f) => !PLAIN_FIELDS.has(f) && !IGNORED_FIELDS.has(f) && !(f === 'key' && body.key === ''));
        if (sensitive) requirePermission(req, 'authz.ChannelSensitiveWrite');
        return ok(await channels.update(staffOf(req), req.body));
      },
    }),

    implement('G04', {
      data: Type.Object({ id: Type.Integer(), name: Type.String() }),
      errors: channelErrors,
      schema: { params: IdParams },
      handler: async (req) => ok(await channels.remove(staffOf(req), req.params.id)),
    }),

    implement('G12', {
      data: Type.Integer(),
      errors: channelErrors,
      schema: { body: Type.Object({ ids: Ids }) },
      handler: async (req) => {
        if (req.body.ids.length === 0) throw new AppError('CHANNEL_IDS_REQUIRED');
        const count = await channels.removeMany(staffOf(req), req.body.ids);
        return ok(count);
      },
    }),

    implement('G15', { data: Type.Integer(), errors: channelErrors, handler: async (req) => ok(await channels.removeDisabled(staffOf(req))) }),

    implement('G11', {
      data: Type.Object({ id: Type.Integer(), status: Type.Integer(), changed: Type.Boolean() }),
      errors: channelErrors,
      schema: { params: IdParams, body: Type.Object({ status: Type.Integer({ minimum: -1000, maximum: 1000 }) }) },
      handler: async (req) => {
        await channels.get(req.params.id);
        const changed = await channels.setStatus(staffOf(req), 'G11', [req.params.id], req.body.status);
        return ok({ id: req.params.id, status: req.body.status, changed: changed > 0 });
      },
    }),

    implement('G28', {
      data: Type.Object({ status: Type.Integer(), count: Type.Integer(), total: Type.Integer() }),
      errors: channelErrors,
      schema: { body: Type.Object({ ids: Ids, status: Type.Integer({ minimum: -1000, maximum: 1000 }) }) },
      handler: async (req) => {
        if (req.body.ids.length === 0) throw new AppError('CHANNEL_IDS_REQUIRED');
        const count = await channels.setStatus(staffOf(req), 'G28', req.body.ids, req.body.status);
        return ok({ status: req.body.status, count, total: req.body.ids.length });
      },
    }),

    implement('G14', {
      data: Type.Object({ id: Type.Integer(), name: Type.String(), sourceId: Type.Integer() }),
      errors: channelErrors,
      schema: {
        params: IdParams,
        querystring: Type.Object({ suffix: Type.Optional(Type.String({ maxLength: 64 })), reset_balance: Type.Optional(Type.Boolean()) }),
      },
      handler: async (req) => {
        const actor = staffOf(req);
        const suffix = req.query.suffix ?? '_复制';
        const data = await once(ctx, req, actor.id, 'G14', (trx) => channels.copy(actor, req.params.id, suffix, req.query.reset_balance ?? true, trx));
        return ok(data);
      },
    }),

    implement('G19', { data: Type.Array(Type.String()), errors: channelErrors, handler: async () => ok(await channels.models(false)) }),
    implement('G20', { data: Type.Array(Type.String()), errors: channelErrors, handler: async () => ok(await channels.models(true)) }),
    implement('G26', { data: Type.Object({ retry_times: Type.Integer() }), handler: async () => ok({ retry_times: ctx.config.gateway.retryTimes }) }),

    implement('G10', {
      data: Type.Object({ id: Type.Integer(), name: Type.String(), key: Type.String() }),
      errors: channelErrors,
      schema: { params: IdParams },
      noStore: true,
      handler: async (req) => {
        const actor = staffOf(req);
        await proofs.consume(securityProofOf(req), actor.id, KEY_READ_SCOPE, req.params.id);
        return ok(await channels.revealKey(actor, req.params.id));
      },
    }),
  ];
}
