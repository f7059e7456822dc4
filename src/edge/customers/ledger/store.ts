import { sql, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { EdgeDB } from '../../db.js';
import type { Db } from '../../keys/store.js';

/** A model name filter: the name exactly, or a LIKE pattern whose escape character is `!`. */
export type NameMatch = { exact: string } | { like: string };

/** What the usage log reads; times in milliseconds, both ends inclusive. */
export interface LogFilter {
  /** undefined: every owner. */
  ownerId?: number;
  /** new-api's log type; 0: every type. */
  type: number;
  tokenName?: string;
  model?: NameMatch;
  fromMs?: number;
  toMs?: number;
}

/** One row of the usage log as read: an ended run or a credit. */
export interface LogRow {
  id: string;
  owner_id: number;
  at_ms: number;
  type: number;
  /** A run's status, or a credit's kind. */
  kind: string;
  /** A failed run's error, or a credit's reason. */
  note: string;
  model_name: string;
  token_name: string;
  token_id: number;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  started_ms: number;
  stream: number;
  request_id: string;
}

type RunEb = ExpressionBuilder<EdgeDB, 'edge_runs'>;

// A run is a consume row (type 2) when it succeeded or cost something; a failed or cancelled run that cost
// nothing is an error row (type 5).
const consumed = (eb: RunEb) => eb.or([eb('status', '=', 'succeeded'), eb('cost', '>', 0)]);
const CREDIT_TYPE = sql<number>`case kind when 'topup' then 1 when 'adjust' then 3 else 4 end`;

function modelMatch(column: string, m: NameMatch) {
  return 'exact' in m ? sql<SqlBool>`${sql.ref(column)} = ${m.exact}` : sql<SqlBool>`${sql.ref(column)} like ${m.like} escape '!'`;
}

/** Ended runs of the filter, with or without its type (the statistics choose consume rows themselves). */
function endedRuns(db: Db, f: Omit<LogFilter, 'type'>) {
  let q = db.selectFrom('edge_runs').where('finished_at', 'is not', null);
  if (f.ownerId !== undefined) q = q.where('owner_id', '=', f.ownerId);
  if (f.fromMs !== undefined) q = q.where('finished_at', '>=', f.fromMs);
  if (f.toMs !== undefined) q = q.where('finished_at', '<=', f.toMs);
  if (f.tokenName !== undefined) q = q.where('token_name', '=', f.tokenName);
  if (f.model) q = q.where(modelMatch('public_model_id', f.model));
  return q;
}

function runPart(db: Db, f: LogFilter) {
  let q = endedRuns(db, f);
  if (f.type === 2) q = q.where(consumed);
  if (f.type === 5) q = q.where((eb) => eb.not(consumed(eb)));
  // Literals, not parameters, in the select lists: PostgreSQL types a UNION's columns from them.
  return q.select((eb) => [
    'run_id as id',
    'owner_id',
    sql<number>`finished_at`.as('at_ms'),
    eb.case().when(consumed(eb)).then(sql.lit(2)).else(sql.lit(5)).end().as('type'),
    'status as kind',
    sql<string>`coalesce(error_message, error_code, '')`.as('note'),
    'public_model_id as model_name',
    'token_name',
    'token_id',
    'cost as quota',
    'prompt_tokens',
    'completion_tokens',
    sql<number>`coalesce(started_at, created_at)`.as('started_ms'),
    'stream',
    'request_id',
  ]);
}

/** Credits appear with no token and no model: a token or model filter leaves them all out (as new-api's log). */
function creditPart(db: Db, f: LogFilter) {
  let q = db.selectFrom('edge_credits');
  if (f.ownerId !== undefined) q = q.where('owner_id', '=', f.ownerId);
  if (f.fromMs !== undefined) q = q.where('created_at', '>=', Math.ceil(f.fromMs / 1000));
  if (f.toMs !== undefined) q = q.where('created_at', '<=', Math.floor(f.toMs / 1000));
  if (f.type === 1) q = q.where('kind', '=', 'topup');
  if (f.type === 3) q = q.where('kind', '=', 'adjust');
  if (f.type === 4) q = q.where('kind', 'not in', ['topup', 'adjust']);
  return q.select([
    'credit_id as id',
    'owner_id',
    sql<number>`created_at * 1000`.as('at_ms'),
    CREDIT_TYPE.as('type'),
    'kind',
    'reason as note',
    sql<string>`''`.as('model_name'),
    sql<string>`''`.as('token_name'),
    sql<number>`0`.as('token_id'),
    'amount as quota',
    sql<number>`0`.as('prompt_tokens'),
    sql<number>`0`.as('completion_tokens'),
    sql<number>`created_at * 1000`.as('started_ms'),
    sql<number>`0`.as('stream'),
    sql<string>`''`.as('request_id'),
  ]);
}

const withRuns = (f: LogFilter) => [0, 2, 5].includes(f.type);
const withCredits = (f: LogFilter) => [0, 1, 3, 4].includes(f.type) && f.tokenName === undefined && f.model === undefined;

async function countOf(q: SelectQueryBuilder<any, any, any>): Promise<number> {
  const r = await q.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}

/** A page of the usage log, newest first (runs and credits as one list), and how many rows the filter has. */
export async function logPage(db: Db, f: LogFilter, limit: number, offset: number): Promise<{ rows: LogRow[]; total: number }> {
  // The two parts select the same columns, in the same order, of the same types (LogRow).
  const parts = [withRuns(f) ? runPart(db, f) : null, withCredits(f) ? creditPart(db, f) : null].filter((p) => p !== null) as unknown as SelectQueryBuilder<any, any, LogRow>[];
  if (parts.length === 0) return { rows: [], total: 0 };
  const list = parts.length === 2 ? parts[0]!.unionAll(parts[1]!) : parts[0]!;
  const [rows, ...counts] = await Promise.all([
    db.selectFrom(list.as('l')).selectAll().orderBy('at_ms', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    ...parts.map(countOf),
  ]);
  const total = counts.reduce((a, b) => a + b, 0);
  return { rows: (rows as unknown as LogRow[]).map(numeric), total };
}

function numeric(r: LogRow): LogRow {
  return {
    ...r,
    owner_id: Number(r.owner_id),
    at_ms: Number(r.at_ms),
    type: Number(r.type),
    note: r.note ?? '',
    token_id: Number(r.token_id),
    quota: Number(r.quota),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    started_ms: Number(r.started_ms),
    stream: Number(r.stream),
  };
}

/** Units of the consume rows of the filter (its type aside). */
export async function consumedQuota(db: Db, f: Omit<LogFilter, 'type'>): Promise<number> {
  const r = await endedRuns(db, f)
    .where(consumed)
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('cost'), sql<number>`0`).as('quota'))
    .executeTakeFirstOrThrow();
  return Number(r.quota);
}

/** Consume rows since `sinceMs` and their tokens (new-api's rpm and tpm): the filter's owner, token and model. */
export async function recentConsumption(db: Db, f: Omit<LogFilter, 'type' | 'fromMs' | 'toMs'>, sinceMs: number) {
  const r = await endedRuns(db, { ...f, fromMs: sinceMs })
    .where(consumed)
    .select((eb) => [eb.fn.countAll<number>().as('calls'), eb.fn.coalesce(eb.fn.sum<number>(sql`prompt_tokens + completion_tokens`), sql<number>`0`).as('tokens')])
    .executeTakeFirstOrThrow();
  return { calls: Number(r.calls), tokens: Number(r.tokens) };
}

// The start of a call's hour in milliseconds; raw text (no parameter) so GROUP BY repeats it exactly.
const HOUR = sql<number>`finished_at - (finished_at % 3600000)`;

/** Consume rows per public model and hour of their end (new-api's quota data), oldest first. */
export async function hourlyUsage(db: Db, f: { ownerId?: number; fromMs: number; toMs: number }) {
  const rows = await endedRuns(db, f)
    .where(consumed)
    .select((eb) => [
      'public_model_id',
      HOUR.as('hour'),
      eb.fn.countAll<number>().as('calls'),
      eb.fn.sum<number>('cost').as('quota'),
      eb.fn.sum<number>(sql`prompt_tokens + completion_tokens`).as('tokens'),
    ])
    .groupBy(['public_model_id', HOUR])
    .orderBy(HOUR)
    .orderBy('public_model_id')
    .execute();
  return rows.map((r) => ({ model: r.public_model_id, hourMs: Number(r.hour), calls: Number(r.calls), quota: Number(r.quota), tokens: Number(r.tokens) }));
}

/** Owner names by id. */
export async function ownerNames(db: Db, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('edge_owners').select(['id', 'name']).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}
