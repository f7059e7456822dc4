import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import { sqliteHandleOf } from './index.js';

const SENTINEL = '\u0000prepared-argument:';

interface Compiled<R> {
  query: CompiledQuery<R>;
  /** For each parameter of the compiled query: the argument that fills it, or undefined for a constant. */
  slots: (number | undefined)[];
}

/**
 * A query Kysely builds and compiles once per dialect, then runs with new argument values. Kysely
 * otherwise rebuilds and recompiles the whole query object on every call, which costs more than running
 * a small indexed query and makes most of its garbage. For the hot queries of a request path only.
 *
 * `build` gets one stand-in per argument and must pass each straight through as a value
 * (`where('sid', '=', sid)`), so the query's shape cannot depend on the values (no variable-length `in`
 * lists); a stand-in that does not come out as a parameter (transformed, or inlined with sql.lit) is
 * refused when the query is first compiled.
 * Works with a Kysely instance or a transaction of either dialect.
 *
 * On SQLite a SELECT outside any transaction runs directly on the cached statement: Kysely's executor
 * (connection mutex, several promise hops) costs more than the query itself in a busy server (about
 * 20–30 µs per query measured on the session list). That is safe only while no transaction is open on
 * the single connection, because a read there would see the transaction's uncommitted writes; so while
 * one is open (begun, not yet committed or rolled back) the read takes Kysely's path and waits for it.
 */
export function prepared<DB, A extends unknown[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>) {
  const byDialect = new Map<unknown, Compiled<R>>();

  function compile(db: Kysely<DB>, arity: number): Compiled<R> {
    const standIns = Array.from({ length: arity }, (_, i) => `${SENTINEL}${i}`);
    const query = build(db, ...(standIns as unknown as A)).compile();
    const slots = query.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(SENTINEL) ? Number(p.slice(SENTINEL.length)) : undefined,
    );
    for (let i = 0; i < arity; i++) {
      if (!slots.includes(i)) throw new Error(`prepared query: argument ${i} is not passed through as a plain parameter`);
    }
    return { query, slots };
  }

  return async (db: Kysely<DB>, ...args: A): Promise<QueryResult<R>> => {
    const dialect = db.getExecutor().adapter.constructor;
    let c = byDialect.get(dialect);
    if (!c) byDialect.set(dialect, (c = compile(db, args.length)));
    const { query, slots } = c;
    const parameters = query.parameters.map((p, i) => (slots[i] === undefined ? p : args[slots[i]!]));
    const handle = query.query.kind === 'SelectQueryNode' ? sqliteHandleOf(db) : undefined;
    if (handle && !handle.inTransaction) return { rows: handle.prepare(query.sql).all(parameters) as R[] };
    return db.executeQuery<R>({ ...query, parameters });
  };
}
