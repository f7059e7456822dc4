import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import { prepared } from './prepared.js';

/** A value JSON carries as PostgreSQL reads it back into the column (json_populate_recordset). */
const plain = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

type Rows = readonly (readonly unknown[])[];

/** Writes rows into one table (insertRows); also names the table and columns, for insertAll. */
export interface RowInserter<DB> {
  (db: Kysely<DB>, rows: Rows): Promise<void>;
  readonly table: keyof DB & string;
  readonly columns: readonly string[];
}

/** The rows as one JSON array of objects, or undefined when a value would not arrive as it is. */
function asJson(columns: readonly string[], rows: Rows): string | undefined {
  if (!rows.every((row) => row.every(plain))) return undefined;
  return JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]]))));
}

/** `"table" (columns) select columns from json_populate_recordset(null::"table", $n)`: the body of an INSERT. */
function fromJson<DB>(into: RowInserter<DB>, json: unknown) {
  const columns = sql.join(into.columns.map((c) => sql.id(c)));
  return sql`${sql.table(into.table)} (${columns}) select ${columns} from json_populate_recordset(null::${sql.table(into.table)}, ${json})`;
}

/**
 * An INSERT of many rows into `table`, each row its values in the order of `columns`. For rows a batch
 * writes together (group-commit.ts Batch): on PostgreSQL and MySQL each statement is a round trip.
 *
 * On PostgreSQL the rows travel as one JSON parameter (`json_populate_recordset` over the table's row type),
 * so the statement's text is the same for any number of rows and stays prepared on the server
 * (pg-statements.ts); elsewhere, and for values JSON would not carry as they are, one multi-row VALUES per
 * `maxRows` rows, built and compiled once per row count (prepared()). Not for a table with json or jsonb
 * columns: json_populate_recordset would store a string given for one as a JSON string, not parse it.
 */
export function insertRows<DB>(table: keyof DB & string, columns: readonly string[], maxRows = 64): RowInserter<DB> {
  const byCount = new Map<number, (db: Kysely<DB>, ...values: unknown[]) => Promise<unknown>>();
  const statementOf = (count: number) =>
    prepared((db: Kysely<DB>, ...values: unknown[]) =>
      db.insertInto(table).values(
        Array.from({ length: count }, (_, row) => Object.fromEntries(columns.map((c, i) => [c, values[row * columns.length + i]]))) as never,
      ),
    );
  const inserter = async (db: Kysely<DB>, rows: Rows): Promise<void> => {
    const json = rows.length > 1 && dialectOf(db) === 'postgres' ? asJson(columns, rows) : undefined;
    if (json !== undefined) return void (await sql`insert into ${fromJson(inserter as RowInserter<DB>, json)}`.execute(db));
    for (let at = 0; at < rows.length; at += maxRows) {
      const chunk = rows.slice(at, at + maxRows);
      let insert = byCount.get(chunk.length);
      if (!insert) byCount.set(chunk.length, (insert = statementOf(chunk.length)));
      await insert(db, ...chunk.flat());
    }
  };
  return Object.assign(inserter, { table, columns });
}

/**
 * Rows of several tables: on PostgreSQL one statement (an INSERT per table, all but the last as
 * data-modifying CTEs; foreign keys are checked at the statement's end, so the order of the tables does not
 * matter), so a batch's rows cost one round trip; elsewhere one insertRows call per table.
 */
export async function insertAll<DB>(db: Kysely<DB>, writes: readonly { into: RowInserter<DB>; rows: Rows }[]): Promise<void> {
  const json = dialectOf(db) === 'postgres' && writes.length > 1 ? writes.map((w) => asJson(w.into.columns, w.rows)) : [];
  if (json.length && json.every((j) => j !== undefined)) {
    const ctes = writes.slice(0, -1).map((w, i) => sql`${sql.id(`w${i}`)} as (insert into ${fromJson(w.into, json[i])})`);
    await sql`with ${sql.join(ctes)} insert into ${fromJson(writes.at(-1)!.into, json.at(-1))}`.execute(db);
    return;
  }
  for (const w of writes) await w.into(db, w.rows);
}
