import {
  MysqlAdapter,
  PostgresAdapter,
  sql,
  type ColumnDefinitionBuilder,
  type InsertQueryBuilder,
  type Kysely,
  type RawBuilder,
  type SelectQueryBuilder,
} from 'kysely';

// What differs between SQLite, PostgreSQL and MySQL/MariaDB, one helper per concern, so stores and
// migrations say what they need instead of testing the dialect themselves.

export type DialectName = 'sqlite' | 'postgres' | 'mysql';

/** The dialect behind a Kysely instance or transaction. */
export function dialectOf(db: Kysely<any>): DialectName {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof MysqlAdapter ? 'mysql' : adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

// ---- migrations ----

/** Type of an auto-incremented id column (pair with idPrimaryKey). */
export function idType(dialect: DialectName) {
  return dialect === 'postgres' ? 'bigserial' : dialect === 'mysql' ? 'bigint' : 'integer';
}

/** The primary key of an id column of idType(dialect). */
export function idPrimaryKey(dialect: DialectName) {
  return (c: ColumnDefinitionBuilder) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
}

/** A double-precision float column type. */
export function doubleType(dialect: DialectName) {
  return dialect === 'postgres' ? 'double precision' : dialect === 'mysql' ? sql`double` : 'real';
}

/** A default for a TEXT column: MySQL 8 takes only an expression there, `default ('')`. */
export function textDefault(dialect: DialectName, value: string): string | RawBuilder<unknown> {
  return dialect === 'mysql' ? sql`(${sql.lit(value)})` : value;
}

/**
 * A unique index over `column` among rows whose `liveColumn` is NULL (soft delete). MySQL has no partial
 * index: there a stored generated column holds `column` for live rows and NULL otherwise (NULLs never
 * collide), named `<index>_key`, and the unique index is on it.
 */
export async function uniqueWhereNull(db: Kysely<any>, index: string, table: string, column: string, liveColumn: string, columnType: string) {
  if (dialectOf(db) !== 'mysql') {
    await sql`create unique index ${sql.id(index)} on ${sql.id(table)} (${sql.id(column)}) where ${sql.id(liveColumn)} is null`.execute(db);
    return;
  }
  const key = `${index}_key`;
  await sql`alter table ${sql.id(table)} add column ${sql.id(key)} ${sql.raw(columnType)}
    generated always as (case when ${sql.id(liveColumn)} is null then ${sql.id(column)} end) stored`.execute(db);
  await sql`create unique index ${sql.id(index)} on ${sql.id(table)} (${sql.id(key)})`.execute(db);
}

/** Creates an index unless one of that name exists on the table (MySQL 8 has no CREATE INDEX IF NOT EXISTS). */
export async function ensureIndex(db: Kysely<any>, name: string, table: string, columns: string[]) {
  if (dialectOf(db) === 'mysql') {
    const { rows } = await sql`select 1 from information_schema.statistics
      where table_schema = database() and table_name = ${table} and index_name = ${name} limit 1`.execute(db);
    if (rows.length) return;
    await db.schema.createIndex(name).on(table).columns(columns).execute();
    return;
  }
  await db.schema.createIndex(name).ifNotExists().on(table).columns(columns).execute();
}

// ---- reads and writes ----

/** Whether SELECT … FOR UPDATE locks rows (SQLite serializes writers on its one connection instead). */
export function locksRows(dialect: DialectName) {
  return dialect !== 'sqlite';
}

/** Holds the selected rows in share mode until the transaction ends (no-op on SQLite). */
export function forShare<Q extends SelectQueryBuilder<any, any, any>>(q: Q, dialect: DialectName): Q {
  if (dialect === 'postgres') return q.forShare() as Q;
  // MariaDB has no FOR SHARE; MySQL 8 still takes the older form.
  if (dialect === 'mysql') return q.modifyEnd(sql`lock in share mode`) as Q;
  return q;
}

/** Runs an INSERT of one row and returns its auto-incremented id (MySQL has no RETURNING: its insert id). */
export async function insertedId(db: Kysely<any>, q: InsertQueryBuilder<any, any, any>, column = 'id'): Promise<number> {
  if (dialectOf(db) === 'mysql') {
    const r = await q.executeTakeFirstOrThrow();
    if (r.insertId === undefined) throw new Error('insert gave no id');
    return Number(r.insertId);
  }
  const row = (await q.returning(column).executeTakeFirstOrThrow()) as Record<string, unknown>;
  return Number(row[column]);
}

/**
 * Updates (`set`) or deletes (`set` null) the rows of `table` that `where` picks and returns the `key` of
 * each row it changed. MySQL has no RETURNING: there the keys are first read FOR UPDATE, then exactly
 * those rows are changed, in the caller's transaction or in one of its own.
 */
export async function changedKeys<K extends string | number>(
  db: Kysely<any>,
  table: string,
  key: string,
  where: <Q extends { where: (...a: any[]) => Q }>(q: Q) => Q,
  set: Record<string, unknown> | null,
): Promise<K[]> {
  const write = (trx: Kysely<any>, keys?: K[]) => {
    const q = set ? trx.updateTable(table).set(set) : trx.deleteFrom(table);
    const picked = where(q as any) as typeof q;
    return keys ? (picked as any).where(key, 'in', keys) : picked;
  };
  if (dialectOf(db) !== 'mysql') {
    const rows = (await write(db).returning(key).execute()) as Record<string, K>[];
    return rows.map((r) => r[key]!);
  }
  const run = async (trx: Kysely<any>) => {
    const keys = ((await where(trx.selectFrom(table).select(key) as any).orderBy(key).forUpdate().execute()) as Record<string, K>[]).map((r) => r[key]!);
    if (keys.length) await write(trx, keys).execute();
    return keys;
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/**
 * A subquery with LIMIT/OFFSET for `where(col, 'in', …)`: MySQL refuses LIMIT directly inside IN, so
 * there it is read through a derived table.
 */
export function inLimited<S extends SelectQueryBuilder<any, any, any>>(db: Kysely<any>, sub: S, column: string): S {
  if (dialectOf(db) !== 'mysql') return sub;
  return db.selectFrom(sub.as('limited')).select(`limited.${column}`) as unknown as S;
}

/**
 * A row source for INSERT … SELECT reading rows from one JSON parameter (an array of arrays): one bound
 * value however many rows. `columns` gives each position's SQL type (used by PostgreSQL and MySQL).
 */
export function jsonRows(db: Kysely<any>, json: string, columns: string[]): RawBuilder<unknown> {
  const dialect = dialectOf(db);
  if (dialect === 'sqlite') return sql`select ${sql.raw(columns.map((_, i) => `value ->> ${i}`).join(', '))} from json_each(${json})`;
  if (dialect === 'postgres') return sql`select ${sql.raw(columns.map((t, i) => `(e ->> ${i})::${t}`).join(', '))} from json_array_elements(${json}::json) as e`;
  const cols = columns.map((t, i) => `c${i} ${t} path '$[${i}]'`).join(', ');
  return sql`select ${sql.raw(columns.map((_, i) => `c${i}`).join(', '))} from json_table(${json}, '$[*]' columns (${sql.raw(cols)})) as j`;
}

/**
 * Updates the rows `where` picks and returns `columns` of the first of them as updated: RETURNING, or on
 * MySQL the row read back in the same transaction (the UPDATE holds its lock until the end).
 */
export async function updateReturning<R extends Record<string, unknown>>(
  db: Kysely<any>,
  table: string,
  where: <Q extends { where: (...a: any[]) => Q }>(q: Q) => Q,
  set: Record<string, unknown> | ((eb: any) => Record<string, unknown>),
  columns: (keyof R & string)[],
): Promise<R | undefined> {
  if (dialectOf(db) !== 'mysql') return (await (where(db.updateTable(table).set(set as never) as any) as any).returning(columns).executeTakeFirst()) as R | undefined;
  const run = async (trx: Kysely<any>) => {
    const r = await (where(trx.updateTable(table).set(set as never) as any) as any).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return undefined;
    return (await (where(trx.selectFrom(table).select(columns) as any) as any).executeTakeFirst()) as R | undefined;
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
