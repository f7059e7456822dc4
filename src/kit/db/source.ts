import path from 'node:path';
import type { Kysely, SelectQueryBuilder } from 'kysely';
import { openDatabase, type Database } from './index.js';

/**
 * A database another system owns, opened read-only to copy rows out of it: `sqlite://…`, a bare SQLite file
 * path, `postgres://…` or `mysql://…` (the last needs openDatabase's MySQL support).
 */
export interface Source {
  database: Database<any>;
  /** Names of the tables present (lower case). */
  tables: Set<string>;
  /** Every row of a table in `orderBy` order; [] when the table does not exist. */
  rows(table: string, orderBy?: string): Promise<Record<string, unknown>[]>;
  /** The rows of a table a page at a time, in the order of `orderBy` (which must identify a row); none when absent. */
  pages(table: string, orderBy: string[], size?: number): AsyncGenerator<Record<string, unknown>[]>;
  /**
   * The rows of a table that `where` keeps, a page at a time in the order of the integer column `key`
   * (which must identify a row); each page starts past the last key, so a late page costs no more than
   * the first. None when the table is absent.
   */
  walk(table: string, key: string, where: (q: Query) => Query, size?: number): AsyncGenerator<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** The database URL for a --from argument: URLs as given, anything else is a SQLite file path. */
export function sourceUrl(from: string): string {
  if (/^(sqlite|postgres|postgresql|mysql):\/\//.test(from)) return from;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(from)) throw new Error('--from must be a SQLite file path or a sqlite://, postgres:// or mysql:// URL');
  return `sqlite://${path.resolve(from)}`;
}

type Query = SelectQueryBuilder<any, any, any>;

export async function openSource(from: string): Promise<Source> {
  const database = await openDatabase<any>(sourceUrl(from), { readOnly: true, poolSize: 2 });
  let tables: Set<string>;
  try {
    tables = new Set((await database.db.introspection.getTables()).map((t) => t.name.toLowerCase()));
  } catch (e) {
    await database.close();
    throw e;
  }
  const db: Kysely<any> = database.db;
  return {
    database,
    tables,
    async rows(table, orderBy = 'id') {
      if (!tables.has(table)) return [];
      return db.selectFrom(table).selectAll().orderBy(orderBy).execute();
    },
    async *pages(table, orderBy, size = 5000) {
      if (!tables.has(table)) return;
      for (let offset = 0; ; offset += size) {
        let q = db.selectFrom(table).selectAll();
        for (const c of orderBy) q = q.orderBy(c);
        const page = await q.limit(size).offset(offset).execute();
        if (page.length) yield page;
        if (page.length < size) return;
      }
    },
    async *walk(table, key, where, size = 5000) {
      if (!tables.has(table)) return;
      let after: number | null = null;
      for (;;) {
        let q = where(db.selectFrom(table).selectAll() as Query);
        if (after !== null) q = q.where(key, '>', after);
        const page = await q.orderBy(key).limit(size).execute();
        if (page.length) yield page;
        if (page.length < size) return;
        after = Number(page[page.length - 1]![key]);
      }
    },
    close: () => database.close(),
  };
}

/** Unix seconds from what a driver returns for a time column (number, Date, or date text); null when empty. */
export function unixSeconds(v: unknown): number | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v) > 1e11 ? Math.floor(Number(v) / 1000) : Number(v);
  const ms = v instanceof Date ? v.getTime() : Date.parse(String(v).replace(' ', 'T'));
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** A boolean column as SQLite (0/1), PostgreSQL (true/false) or MySQL (0/1, '1') returns it. */
export function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't' || v === 'true' || (typeof v === 'bigint' && v !== 0n);
}

/** A text column, null and undefined as ''. */
export function text(v: unknown): string {
  return v === null || v === undefined ? '' : String(v);
}

/** An integer column, null/undefined/garbage as `fallback`. */
export function int(v: unknown, fallback = 0): number {
  const n = Number(v);
  return v === null || v === undefined || v === '' || !Number.isFinite(n) ? fallback : Math.trunc(n);
}
