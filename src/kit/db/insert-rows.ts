import type { Kysely } from 'kysely';
import { prepared } from './prepared.js';

/**
 * An INSERT of many rows into `table`, each row its values in the order of `columns`: one statement per
 * `maxRows` rows, built and compiled once per row count (prepared()). For rows a batch writes together
 * (group-commit.ts Batch): on PostgreSQL and MySQL each statement is a round trip.
 */
export function insertRows<DB>(table: keyof DB & string, columns: readonly string[], maxRows = 64) {
  const byCount = new Map<number, (db: Kysely<DB>, ...values: unknown[]) => Promise<unknown>>();
  const statementOf = (count: number) =>
    prepared((db: Kysely<DB>, ...values: unknown[]) =>
      db.insertInto(table).values(
        Array.from({ length: count }, (_, row) => Object.fromEntries(columns.map((c, i) => [c, values[row * columns.length + i]]))) as never,
      ),
    );
  return async (db: Kysely<DB>, rows: readonly (readonly unknown[])[]): Promise<void> => {
    for (let at = 0; at < rows.length; at += maxRows) {
      const chunk = rows.slice(at, at + maxRows);
      let insert = byCount.get(chunk.length);
      if (!insert) byCount.set(chunk.length, (insert = statementOf(chunk.length)));
      await insert(db, ...chunk.flat());
    }
  };
}
