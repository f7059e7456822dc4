import type pg from 'pg';

/** Statements each PostgreSQL connection keeps prepared, unless the URL says otherwise (as Prisma's default). */
export const STATEMENT_CACHE_DEFAULT = 100;

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** node-postgres's record of the statements a connection parsed, by name (internal; read in pg/lib/query.js). */
function parsedStatements(client: pg.Client): Record<string, string> {
  return (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;
}

/**
 * A named statement the server can no longer run as prepared: its result columns changed under it (a `*`
 * over a table another process altered: "cached plan must not change result type") or the server forgot it
 * (a pooler that reset the session).
 */
function stale(error: unknown): boolean {
  const e = error as { code?: string; routine?: string } | null;
  return e?.code === '26000' || e?.routine === 'RevalidateCachedQuery';
}

/**
 * Keeps the `capacity` most recently used statements of a connection prepared on the server. Kysely sends
 * every statement unnamed, so PostgreSQL parses, analyses and plans it again each time: for the ledger's
 * CTEs that is most of the server's work per call (measured: 650 → 1,080 chat calls/s on PostgreSQL, the edge's
 * own CPU per call down by a fifth, since a named statement also skips its Parse and Describe messages).
 *
 * Only statements with parameters are named (transaction control and DDL are sent as before). Names are
 * never reused on a connection; the least recently used statement is deallocated when the cache is full. A
 * statement that turned stale is forgotten (and fails once, as PostgreSQL reports it); its next use prepares
 * it again. A pooler in transaction mode (PgBouncer before 1.21) cannot keep prepared statements: set
 * `statement_cache_size=0` on the URL there.
 */
export function cacheStatements(client: pg.Client, capacity: number): void {
  const names = new Map<string, string>(); // text → name, least recently used first
  let made = 0;
  const query = client.query.bind(client) as Query;

  const forget = (text: string) => {
    const name = names.get(text);
    if (name === undefined) return;
    names.delete(text);
    const parsed = parsedStatements(client);
    // Never prepared (its Parse failed, or the server forgot it): DEALLOCATE would fail, and inside a
    // transaction abort it.
    if (parsed[name] === undefined) return;
    delete parsed[name];
    // Queued behind what is in flight; inside a failed transaction it fails and the statement stays on the
    // server until the connection closes (its name is never used again).
    (query(`deallocate "${name}"`) as Promise<unknown>).catch(() => {});
  };

  (client as unknown as { query: Query }).query = (config, values, callback) => {
    if (typeof config !== 'string' || !Array.isArray(values) || values.length === 0 || callback !== undefined) {
      return query(config, values, callback);
    }
    const known = names.get(config);
    if (known !== undefined) names.delete(config);
    else if (names.size >= capacity) forget(names.keys().next().value as string);
    const name = known ?? `s${++made}`;
    names.set(config, name);
    return (query({ name, text: config, values }) as Promise<unknown>).catch((error: unknown) => {
      if (stale(error)) {
        if ((error as { code?: string }).code === '26000') delete parsedStatements(client)[name];
        forget(config);
      }
      throw error;
    });
  };
}
