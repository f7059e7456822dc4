import { sql, type Kysely } from 'kysely';
import { dialectOf } from './dialect.js';
import { prepared } from './prepared.js';

/** A value JSON carries as PostgreSQL reads it back into the column (json_populate_recordset). */
const plain = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * An INSERT of many rows into `table`, each row its values in the order of `columns`. For rows a batch
 * writes together (group-commit.ts Batch): on PostgreSQL and MySQL each statement is a round trip.
 *
 * On PostgreSQL the rows travel as one JSON parameter (`json_populate_recordset` over the table's row type),
 * so the statement's text is the same for any number of rows and stays prepared on the server
 * (pg-statements.ts); elsewhere, and for values JSON would not carry as they are, one multi-row VALUES per
 * `maxRows` rows, built and compiled once per row count (prepared()).
 */
export function insertRows<DB>(table: keyof DB & string, columns: readonly string[], maxRows = 64) {
  const fromJson = prepared((db: Kysely<DB>, rows: unknown) =>
    db
      .insertInto(table)
      .columns(columns as never)
      .expression((db as Kysely<any>).selectFrom(sql`json_populate_recordset(null::${sql.table(table)}, ${rows})`.as('r')).select(columns as string[])),
  );
  const byCount = new Map<number, (db: Kysely<DB>, ...values: unknown[]) => Promise<unknown>>();
  const statementOf = (count: number) =>
    prepared((db: Kysely<DB>, ...values: unknown[]) =>
      db.insertInto(table).values(
        Array.from({ length: count }, (_, row) => Object.fromEntries(columns.map((c, i) => [c, values[row * columns.length + i]]))) as never,
      ),
    );
  return async (db: Kysely<DB>, rows: readonly (readonly unknown[])[]): Promise<void> => {
    if (rows.length > 1 && dialectOf(db) === 'postgres' && rows.every((row) => row.every(plain))) {
      await fromJson(db, JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])))));
      return;
    }
    for (let at = 0; at < rows.length; at += maxRows) {
      const chunk = rows.slice(at, at + maxRows);
      let insert = byCount.get(chunk.length);
      if (!insert) byCount.set(chunk.length, (insert = statementOf(chunk.length)));
      await insert(db, ...chunk.flat());
    }
  };
}
