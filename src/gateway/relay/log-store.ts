import { sql, type Kysely } from 'kysely';
import { prepared } from '../../kit/db/prepared.js';
import type { GatewayDB, RelayLogTable } from '../db.js';

type Db = Kysely<GatewayDB>;
export type RelayLogRow = Omit<RelayLogTable, 'id'>;

const COLUMNS = [
  'created_at', 'request_id', 'caller', 'caller_group', 'format', 'stream', 'model', 'upstream_model', 'channel_id', 'key_index', 'status', 'error_code',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'quota', 'cost', 'first_byte_ms', 'total_ms', 'retries', 'attempts', 'usage_counted', 'error_detail',
] as const satisfies readonly (keyof RelayLogRow)[];
/** Rows per multi-row insert; what is left of a flush goes one row at a time. */
const BATCH = 50;

/** The `i`-th row of a flat list of column values (COLUMNS order). */
function rowAt(values: unknown[], i: number): RelayLogRow {
  return Object.fromEntries(COLUMNS.map((c, j) => [c, values[i * COLUMNS.length + j]])) as unknown as RelayLogRow;
}

// Built and compiled once per dialect (see prepared()): Kysely would otherwise build a query of every row's values on each flush.
const insertOne = prepared((db: Db, ...values: unknown[]) => db.insertInto('relay_log').values(rowAt(values, 0)));
const insertBatch = prepared((db: Db, ...values: unknown[]) => db.insertInto('relay_log').values(Array.from({ length: BATCH }, (_, i) => rowAt(values, i))));

const valuesOf = (rows: RelayLogRow[]) => rows.flatMap((r) => COLUMNS.map((c) => r[c]));

export async function insertLogRows(db: Db, rows: RelayLogRow[]) {
  let i = 0;
  for (; i + BATCH <= rows.length; i += BATCH) await insertBatch(db, ...valuesOf(rows.slice(i, i + BATCH)));
  for (; i < rows.length; i++) await insertOne(db, ...valuesOf([rows[i]!]));
}

/** Deletes rows older than `before` (ms), a bounded batch at a time; answers how many went. */
export async function pruneLog(db: Db, before: number): Promise<number> {
  let total = 0;
  for (;;) {
    const ids = (await db.selectFrom('relay_log').select('id').where('created_at', '<', before).orderBy('id').limit(5000).execute()).map((r) => Number(r.id));
    if (!ids.length) return total;
    await db.deleteFrom('relay_log').where('id', 'in', ids).execute();
    total += ids.length;
  }
}

export interface LogFilter {
  model?: string;
  channel_id?: number;
  /** 'success', 'error', or one HTTP status. */
  status?: string;
  caller?: string;
  /** Milliseconds since the epoch, inclusive / exclusive. */
  from?: number;
  to?: number;
}

function filtered(db: Db, f: LogFilter) {
  let q = db.selectFrom('relay_log');
  if (f.model) q = q.where('model', '=', f.model);
  if (f.channel_id !== undefined) q = q.where('channel_id', '=', f.channel_id);
  if (f.caller) q = q.where('caller', '=', f.caller);
  if (f.from !== undefined) q = q.where('created_at', '>=', f.from);
  if (f.to !== undefined) q = q.where('created_at', '<', f.to);
  if (f.status === 'success') q = q.where('error_code', 'is', null);
  else if (f.status === 'error') q = q.where('error_code', 'is not', null);
  else if (f.status) q = q.where('status', '=', Number(f.status));
  return q;
}

export async function listLog(db: Db, f: LogFilter, limit: number, offset: number) {
  const [rows, count] = await Promise.all([
    filtered(db, f).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    filtered(db, f).select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Calls, errors, tokens, quota and latency per time bucket (ms) and per model, channel or caller (an edge owner). */
export async function usageBuckets(db: Db, f: LogFilter, bucketMs: number, by: 'model' | 'channel_id' | 'caller') {
  // created_at - created_at % n: integer arithmetic on all three databases (MySQL's `/` is decimal).
  const bucket = sql<number>`created_at - created_at % ${sql.lit(bucketMs)}`;
  const rows = await filtered(db, f)
    .select([
      bucket.as('bucket'),
      sql<string | number | null>`${sql.ref(by)}`.as('key'),
      (e) => e.fn.countAll<number>().as('calls'),
      sql<number>`sum(case when error_code is null then 0 else 1 end)`.as('errors'),
      sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
      sql<number>`sum(completion_tokens)`.as('completion_tokens'),
      sql<number>`sum(quota)`.as('quota'),
      sql<number>`sum(total_ms)`.as('total_ms'),
    ])
    .groupBy([bucket, sql.ref(by)])
    .orderBy('bucket')
    .execute();
  return rows.map((r) => ({
    bucket: Number(r.bucket),
    key: r.key === null ? '' : String(r.key),
    calls: Number(r.calls),
    errors: Number(r.errors),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    quota: Number(r.quota),
    avg_ms: Number(r.calls) ? Math.round(Number(r.total_ms) / Number(r.calls)) : 0,
  }));
}

/**
 * The row of one request id made by one caller: the newest served one when there is one (a call retried
 * under the same id after a served attempt must not hide what was served), else the newest.
 */
export async function logRowOf(db: Db, requestId: string, caller: string) {
  return db
    .selectFrom('relay_log')
    .selectAll()
    .where('request_id', '=', requestId)
    .where('caller', '=', caller)
    .orderBy(sql`case when error_code is null then 0 else 1 end`)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
