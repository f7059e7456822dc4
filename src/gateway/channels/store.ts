import { sql, SqliteAdapter, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { changedKeys, ensureIndex, inLimited, insertedId, jsonRows, locksRows } from '../../kit/db/index.js';
import { prepared } from '../../kit/db/prepared.js';
import { readOffThread } from '../../kit/db/read-thread.js';
import type { AbilityTable, ChannelTable, GatewayDB } from '../db.js';
import { splitList, STATUS } from './types.js';

export type Db = Kysely<GatewayDB>;
export type ChannelRow = ChannelTable;

/** Every column except the sealed key: what list/get queries select. */
export const PUBLIC_COLUMNS = [
  'id', 'type', 'openai_organization', 'test_model', 'status', 'name', 'weight', 'created_time', 'test_time',
  'response_time', 'base_url', 'other', 'balance', 'balance_updated_time', 'models', 'group', 'used_quota',
  'model_mapping', 'status_code_mapping', 'priority', 'auto_ban', 'other_info', 'tag', 'setting', 'param_override',
  'header_override', 'remark', 'channel_info', 'settings',
] as const;

export type PublicChannel = Omit<ChannelRow, 'key'>;

export async function getChannel(db: Db, id: number, lock = false): Promise<ChannelRow | undefined> {
  let q = db.selectFrom('channels').selectAll().where('id', '=', id);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** forUpdate locks rows on PostgreSQL and MySQL; SQLite serializes write transactions on its single connection. */
export const lockable = locksRows;

export async function insertChannel(db: Db, values: Omit<ChannelRow, 'id'>): Promise<number> {
  return insertedId(db, db.insertInto('channels').values(values as never));
}

export function abilityRows(c: Pick<ChannelRow, 'id' | 'group' | 'models' | 'status' | 'priority' | 'weight' | 'tag'>): AbilityTable[] {
  const rows: AbilityTable[] = [];
  for (const group of splitList(c.group)) {
    for (const model of splitList(c.models)) {
      rows.push({ group, model, channel_id: c.id, enabled: c.status === STATUS.enabled ? 1 : 0, priority: c.priority, weight: c.weight, tag: c.tag || null });
    }
  }
  return rows;
}

/**
 * The routing index of abilities, as migration 0003 creates it. A G18 build on SQLite into an empty table
 * drops it and creates it once at the end (one sort instead of millions of random B-tree inserts); the
 * gateway also creates it at start in case a process died during such a build.
 */
export async function ensureRoutingIndex(db: Db) {
  await ensureIndex(db, 'abilities_group_model_idx', 'abilities', ['group', 'model', 'enabled', 'priority']);
}

/** Ids per statement of a multi-row write: far below SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
const IDS_PER_STATEMENT = 500;

/** The items in slices of IDS_PER_STATEMENT, in order: one statement's worth each. */
export function idChunks<T>(items: T[]): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += IDS_PER_STATEMENT) chunks.push(items.slice(i, i + IDS_PER_STATEMENT));
  return chunks;
}

/** Ability rows held in memory at once while rebuilding (one channel may add up to validate.ts's MAX_ABILITIES_PER_CHANNEL). */
const ABILITY_BATCH = 50_000;

/**
 * Replaces the abilities of the given channels (call inside the transaction that wrote them). Rows are
 * built and inserted a batch at a time, so a write touching many channels never holds all their rows.
 */
export async function rebuildAbilities(db: Db, channels: Pick<ChannelRow, 'id' | 'group' | 'models' | 'status' | 'priority' | 'weight' | 'tag'>[]) {
  for (const chunk of idChunks(channels)) await db.deleteFrom('abilities').where('channel_id', 'in', chunk.map((c) => c.id)).execute();
  let batch: AbilityTable[] = [];
  const flush = async () => {
    // Sorted by the routing index key: neighbouring inserts land on the same index pages.
    batch.sort((a, b) => (a.group < b.group ? -1 : a.group > b.group ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
    for (let i = 0; i < batch.length; i += 10_000) await insertAbilities(db, batch.slice(i, i + 10_000));
    batch = [];
  };
  for (const c of channels) {
    for (const row of abilityRows(c)) batch.push(row);
    if (batch.length >= ABILITY_BATCH) await flush();
  }
  await flush();
}

/**
 * Inserts ability rows with one statement whose single parameter is a JSON array of rows: no per-row
 * parameters to bind and no statement text that grows with the row count.
 */
async function insertAbilities(db: Db, rows: AbilityTable[]) {
  const json = JSON.stringify(rows.map((a) => [a.group, a.model, a.channel_id, a.enabled, a.priority, a.weight, a.tag]));
  const rowsOf = jsonRows(db, json, ['text', 'text', 'bigint', 'integer', 'bigint', 'bigint', 'text']);
  await sql`insert into abilities ("group", model, channel_id, enabled, priority, weight, tag) ${rowsOf}`.execute(db);
}

/**
 * Deletes channels, then their abilities. Channels first: on PostgreSQL the DELETE waits for a concurrent
 * writer holding the row, and the abilities statement that follows sees whatever that writer committed.
 */
export async function deleteChannels(db: Db, ids: number[], lock: boolean, onlyStatus?: number[]): Promise<number> {
  let n = 0;
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  for (const chunk of idChunks(sorted)) {
    // Row locks are always taken in id order, so concurrent multi-row writers cannot deadlock.
    if (lock) await db.selectFrom('channels').select('id').where('id', 'in', chunk).orderBy('id').forUpdate().execute();
    const deleted = (
      await changedKeys<number>(db, 'channels', 'id', (q) => (onlyStatus ? q.where('id', 'in', chunk).where('status', 'in', onlyStatus) : q.where('id', 'in', chunk)), null)
    ).map(Number);
    if (deleted.length) await db.deleteFrom('abilities').where('channel_id', 'in', deleted).execute();
    n += deleted.length;
  }
  return n;
}

/** Distinct models of the abilities index (a scan of millions of rows in a large installation). */
export async function modelNames(db: Db, enabledOnly: boolean): Promise<string[]> {
  let q = db.selectFrom('abilities').select('model').distinct().orderBy('model');
  if (enabledOnly) q = q.where('enabled', '=', 1);
  return (await readOffThread(db, q)).map((r) => r.model);
}

export interface ListFilter {
  status?: 'enabled' | 'disabled';
  type?: number;
  group?: string;
  keyword?: string;
  /** SQLite: the FTS5 query narrowing the keyword's candidates (keywordIndexQuery); none: a plain scan. */
  keywordMatch?: string;
  /** SQLite: every channel's priority is inside the index key's range, so its rowids follow the default order. */
  keywordOrdered?: boolean;
  /**
   * PostgreSQL: a part of the keyword (keywordWindow) the pg_trgm indexes are asked for; every match is
   * then read and sorted instead of walking the page's order.
   */
  keywordWindow?: string;
  model?: string;
}

function likeEscape(s: string) {
  return '%' + s.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
}

/** ESCAPE '\' as a literal each dialect quotes its own way (MySQL doubles the backslash). */
const ESCAPE = sql`escape ${sql.lit('\\')}`;

/** Applies the list/search filters (the type filter only when withType). */
export function applyFilter<O>(db: Db, q: SelectQueryBuilder<GatewayDB, 'channels', O>, f: ListFilter, withType: boolean) {
  // Case-insensitive LIKE: SQLite's LIKE already folds ASCII case on both sides, exactly what its lower()
  // does, so lower() would only copy every compared text; PostgreSQL's LIKE is case-sensitive.
  const folded = db.getExecutor().adapter instanceof SqliteAdapter ? (e: RawBuilder<unknown>) => e : (e: RawBuilder<unknown>) => sql`lower(${e})`;
  if (f.status === 'enabled') q = q.where('status', '=', STATUS.enabled);
  if (f.status === 'disabled') q = q.where('status', '!=', STATUS.enabled);
  if (withType && f.type !== undefined) q = q.where('type', '=', f.type);
  if (f.group) q = q.where(folded(sql`',' || ${sql.ref('group')} || ','`), 'like', sql`${folded(sql`${likeEscape(`,${f.group},`)}`)} ${ESCAPE}`);
  if (f.model) q = q.where(folded(sql`models`), 'like', sql`${folded(sql`${likeEscape(f.model)}`)} ${ESCAPE}`);
  if (f.keyword) {
    const kw = f.keyword;
    const pattern = likeEscape(kw);
    // On SQLite the trigram index first narrows the rows (a superset of the LIKE matches: it folds case
    // at least as widely as lower()); the LIKEs then decide exactly. PostgreSQL serves the same LIKEs
    // from its pg_trgm indexes when the extension exists.
    const fts = f.keywordMatch;
    const like = sql`${folded(sql`${pattern}`)} ${ESCAPE}`;
    const columns = [sql`name`, sql`base_url`, sql`coalesce(tag, '')`];
    const window = f.keywordWindow;
    q = q.where((eb) => {
      // With a window, the index sees only the window's LIKE (given the whole keyword's LIKE too, it would
      // read the long entry lists of its common trigrams as well); strpos, which no index serves, decides.
      const text = window
        ? eb.or(columns.map((c) => eb.and([eb(folded(c), 'like', sql`lower(${likeEscape(window)}) ${ESCAPE}`), eb(sql`strpos(${folded(c)}, lower(${kw}))`, '>', 0)])))
        : eb.or(columns.map((c) => eb(folded(c), 'like', like)));
      if (!mayBeId(kw)) return text;
      const matched = fts ? eb.and([eb('id', 'in', sql<number>`(select rowid & ${sql.lit(ID_BITS)} from channels_fts where channels_fts match ${fts})`), text]) : text;
      return eb.or([eb('id', '=', Number(kw)), matched]);
    });
    // Unless the keyword may also be an id, the index's matches drive the query (a join: no list of
    // them to build first, as an IN would).
    if (usesKeywordJoin(f)) {
      const hits = sql<{ fts_id: number }>`(select rowid as fts_key, rowid & ${sql.lit(ID_BITS)} as fts_id from channels_fts where channels_fts match ${fts})`.as('fts');
      q = q.innerJoin(hits, (j) => j.onRef('fts.fts_id', '=', 'channels.id')) as unknown as typeof q;
    }
  }
  return q;
}

/** The low 32 bits of a trigram index rowid: the channel id (migration 0008; the high bits are the priority). */
const ID_BITS = 4294967295;
/** Priorities the index key holds exactly (migration 0008 clamps others, whose order it then gets wrong). */
const KEY_PRIORITY_RANGE = [-1073741824, 1073741823] as const;

const priorityRange = prepared((db: Db) =>
  db.selectNoFrom((eb) => [
    eb.selectFrom('channels').select((e) => e.fn.min('priority').as('p')).as('lo'),
    eb.selectFrom('channels').select((e) => e.fn.max('priority').as('p')).as('hi'),
  ]),
);

/** Whether every channel's priority is one the index key holds exactly (two index seeks). */
export async function keyPrioritiesExact(db: Db): Promise<boolean> {
  const { lo, hi } = (await priorityRange(db)).rows[0]!;
  return lo === null || (Number(lo) >= KEY_PRIORITY_RANGE[0] && Number(hi) <= KEY_PRIORITY_RANGE[1]);
}

/** A keyword of digits also matches the channel with that id. */
function mayBeId(keyword: string) {
  return /^\d{1,15}$/.test(keyword);
}

/** Whether the trigram index's matches drive the query as a join (an id-like keyword matches outside them). */
function usesKeywordJoin(f: ListFilter) {
  return !!f.keywordMatch && !!f.keyword && !mayBeId(f.keyword);
}

export async function typeCounts(db: Db, f: ListFilter): Promise<Record<string, number>> {
  const rows = await readOffThread(db, applyFilter(db, db.selectFrom('channels'), f, false).select(['type', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('type'));
  return Object.fromEntries(rows.map((r) => [String(r.type), Number(r.n)]));
}

export const SORTABLE = ['id', 'name', 'priority', 'balance', 'response_time', 'test_time'] as const;
export type SortBy = (typeof SORTABLE)[number];

export async function countChannels(db: Db, f: ListFilter): Promise<number> {
  const [row] = await readOffThread(db, applyFilter(db, db.selectFrom('channels'), f, true).select((eb) => eb.fn.countAll<number>().as('n')));
  return Number(row?.n ?? 0);
}

type Sort = { by: SortBy; dir: 'asc' | 'desc' };

function ordered<Q extends SelectQueryBuilder<GatewayDB, 'channels', any>>(q: Q, sort: Sort, reversed = false): Q {
  const flip = (d: 'asc' | 'desc') => (reversed ? (d === 'asc' ? 'desc' : 'asc') : d);
  return (sort.by === 'id' ? q.orderBy('id', flip(sort.dir)) : q.orderBy(sort.by, flip(sort.dir)).orderBy('id', flip('desc'))) as Q;
}

/**
 * One page as a deferred join: the subquery picks the page's ids (filter, order and OFFSET walk only index
 * entries where an index covers them: (priority, id), (name, id), id), the outer query reads the full rows
 * of those ids alone. Selecting full rows directly would read every skipped row of a deep page. Returned
 * without its select list, so the caller picks the columns (or builds each row's JSON).
 *
 * fromEnd (SQLite, for pages past the middle): the ids are picked walking the reversed order from the
 * other end, with limit and offset computed in the same statement from the exact count of matching rows
 * (an unfiltered count(*) reads only page headers). The order is total (id breaks ties) and SQLite's
 * descending order is the exact reverse of its ascending one, so the page holds the same rows.
 *
 * PostgreSQL and MySQL have no cheap exact count (at 100k channels PostgreSQL's count(*) costs 8.5 ms, as
 * much as walking to the deep page), so there the end is placed by `total`, the listing's total answered
 * with this page (cached, see routes.ts: exact after this instance's own writes, up to 4 s old after
 * another instance's). The order's reverse is exact on both (every sorted column is NOT NULL, id breaks ties).
 */
export function pageQuery(db: Db, f: ListFilter, sort: Sort, limit: number, offset: number, fromEnd = false, total?: number) {
  const filtered = () => applyFilter(db, db.selectFrom('channels'), f, true);
  let ids;
  if (!fromEnd && usesKeywordJoin(f) && f.keywordOrdered && sort.by === 'priority' && sort.dir === 'desc') {
    // The trigram index's rowids follow this order: its matches are read from the top, and the walk
    // stops once the page is full, instead of checking and sorting every match.
    ids = filtered().select('id').orderBy(sql`fts.fts_key`, 'desc').limit(limit).offset(offset);
  } else if (f.keywordWindow) {
    // The matches first, fenced off (materialized), so the planner cannot turn back to walking the order.
    const by = sort.by === 'id' ? (['id'] as const) : (['id', sort.by] as const);
    const hits = db.with((cte) => cte('hits').materialized(), () => filtered().select(by));
    ids = ordered(hits.selectFrom('hits').select('id') as unknown as ReturnType<typeof filtered>, sort).limit(limit).offset(offset);
  } else if (fromEnd && db.getExecutor().adapter instanceof SqliteAdapter) {
    const n = filtered().select((eb) => eb.fn.countAll<number>().as('n'));
    // max(0, …): a negative LIMIT would mean no limit at all.
    ids = ordered(filtered().select('id'), sort, true)
      .limit(sql<number>`max(0, min(${limit}, (${n}) - ${offset}))`)
      .offset(sql<number>`max(0, (${n}) - ${offset} - ${limit})`);
  } else if (fromEnd && total !== undefined) {
    ids = ordered(filtered().select('id'), sort, true)
      .limit(Math.max(0, Math.min(limit, total - offset)))
      .offset(Math.max(0, total - offset - limit));
  } else {
    ids = ordered(filtered().select('id'), sort).limit(limit).offset(offset);
  }
  return ordered(db.selectFrom('channels').where('id', 'in', inLimited(db, ids, 'id')), sort);
}

/**
 * Tag mode: pages over distinct non-empty tags; the query (without its select list) of every matching
 * channel of those tags, or null when the page has no tags.
 */
export async function tagPageQuery(db: Db, f: ListFilter, limit: number, offset: number) {
  const base = taggedBase(db, f);
  const tags = (await readOffThread(db, base().select('tag').distinct().orderBy('tag').limit(limit).offset(offset))).map((r) => r.tag!);
  return tags.length ? base().where('tag', 'in', tags).orderBy('tag').orderBy('priority', 'desc').orderBy('id', 'desc') : null;
}

function taggedBase(db: Db, f: ListFilter) {
  return () => applyFilter(db, db.selectFrom('channels'), f, true).where('tag', 'is not', null).where('tag', '!=', '');
}

export async function countTags(db: Db, f: ListFilter): Promise<number> {
  const base = taggedBase(db, f);
  const [row] = await readOffThread(db, db.selectFrom(base().select('tag').distinct().as('t')).select((eb) => eb.fn.countAll<number>().as('n')));
  return Number(row?.n ?? 0);
}

/** The enabled abilities of one (group, model): the relay's candidates. */
export async function routableAbilities(db: Db, group: string, model: string) {
  return db.selectFrom('abilities').select(['channel_id', 'priority', 'weight']).where('group', '=', group).where('model', '=', model).where('enabled', '=', 1).execute();
}

/** Adds relayed quota to channels' used_quota, one statement per channel, in id order (no lock-order deadlocks). */
export async function addUsedQuota(db: Db, deltas: Map<number, number>) {
  for (const [id, quota] of [...deltas].sort((a, b) => a[0] - b[0])) {
    await db.updateTable('channels').set({ used_quota: sql`used_quota + ${quota}` }).where('id', '=', id).execute();
  }
}

/** Abilities of one (group, model) whose channel was disabled by the system (status 3): the breaker's probe candidates. */
export async function dormantAbilities(db: Db, group: string, model: string) {
  return db
    .selectFrom('abilities')
    .innerJoin('channels', 'channels.id', 'abilities.channel_id')
    .select(['abilities.channel_id', 'abilities.priority', 'abilities.weight', 'channels.other_info', 'channels.settings'])
    .where('abilities.group', '=', group)
    .where('abilities.model', '=', model)
    .where('abilities.enabled', '=', 0)
    .where('channels.status', '=', STATUS.auto)
    .execute();
}
