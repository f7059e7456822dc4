import fs from 'node:fs';
import path from 'node:path';
import { Kysely, SqliteDialect, sql, type Migration, Migrator, type MigrationProvider } from 'kysely';
import SQLite from 'better-sqlite3';
import { CHECKPOINT_DEFAULTS, WalCheckpointer, type CheckpointOptions } from './checkpoint.js';
import { attachReadThread, ReadThread } from './read-thread.js';
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js';
import { cacheStatements, STATEMENT_CACHE_DEFAULT } from './pg-statements.js';
import { restrictSqliteFiles } from './sqlite-files.js';
import type { DialectName } from './dialect.js';

export interface Database<DB> {
  db: Kysely<DB>;
  dialect: DialectName;
  /** PostgreSQL schema the tables live in, when the URL named one. */
  schema?: string;
  /** Closes the pool or file handle. */
  close(): Promise<void>;
  /** A cheap round trip for readiness checks. */
  ping(): Promise<void>;
}

/** pg, loaded by the first PostgreSQL URL (pg and mysql2 are loaded only by a process that uses them). */
async function loadPg() {
  const { default: pg } = await import('pg');
  // int8 (COUNT(*), BIGINT columns) as JS numbers: every such value here is well below 2^53.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  pg.types.setTypeParser(1700, (v: string) => Number(v));
  return pg;
}

export interface OpenOptions {
  /** PostgreSQL and MySQL: connections in the pool (default 10). */
  poolSize?: number;
  /** SQLite file: a worker thread with its own connection serves readOffThread() (read-thread.ts). */
  readThread?: boolean;
  /** SQLite: page cache of each connection in MB (SQLite's default is 2 MB). */
  sqliteCacheMb?: number;
  /** Open for reading only: a SQLite file must exist and is never written; PostgreSQL sessions are read-only. */
  readOnly?: boolean;
  /**
   * A writable SQLite file: its WAL is checkpointed by a worker thread, not in the commits (checkpoint.ts);
   * false leaves it to SQLite's automatic checkpoint.
   */
  checkpoint?: CheckpointOptions | false;
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens a database from a URL: sqlite:///abs/path, sqlite://relative/path, sqlite://:memory: or
 * postgres://… (optional ?schema=NAME to keep tables in their own schema, created when missing;
 * ?statement_cache_size=N statements kept prepared per connection, 0 for none: pg-statements.ts) or
 * mysql://user:password@host:port/NAME (or ?database=NAME; MySQL 8 and MariaDB 10.11+, see mysql.ts).
 */
export async function openDatabase<DB>(url: string, opts: OpenOptions = {}): Promise<Database<DB>> {
  if (url.startsWith('sqlite://')) {
    const file = url.slice('sqlite://'.length);
    if (file && file !== ':memory:' && !opts.readOnly) {
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      restrictSqliteFiles(file);
    }
    const handle = opts.readOnly ? new SQLite(file, { readonly: true, fileMustExist: true }) : new SQLite(file);
    handle.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Switching a new file to WAL takes its write lock, and a process closing the file last takes it to
    // checkpoint: another process starting alongside waits for those however long they take.
    if (!opts.readOnly) await whenUnlocked(handle, () => handle.pragma('journal_mode = WAL'));
    if (!opts.readOnly) handle.pragma('synchronous = NORMAL');
    handle.pragma('foreign_keys = ON');
    const cacheKib = opts.sqliteCacheMb ? opts.sqliteCacheMb * 1024 : undefined;
    if (cacheKib) handle.pragma(`cache_size = -${cacheKib}`);
    const statements = cachingStatements(handle);
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: statements }) });
    sqliteHandles.set(db, statements);
    const thread = opts.readThread && file !== ':memory:' ? new ReadThread(path.resolve(file), cacheKib) : undefined;
    if (thread) attachReadThread(db, thread);
    const onFile = file !== '' && file !== ':memory:' && !opts.readOnly;
    const checkpointer = onFile && opts.checkpoint !== false ? new WalCheckpointer(handle, path.resolve(file), { ...CHECKPOINT_DEFAULTS, ...opts.checkpoint }, SQLITE_BUSY_TIMEOUT_MS) : undefined;
    return {
      db,
      dialect: 'sqlite',
      close: async () => {
        await checkpointer?.close();
        await thread?.close();
        await db.destroy();
        // Kysely's driver opens (and so closes) the handle only once it ran a query. Closed last, the
        // connection copies what the WAL holds into the database file and removes it.
        if (handle.open) handle.close();
      },
      ping: async () => {
        handle.prepare('select 1').get();
      },
    };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pg = await loadPg();
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    const statementCache = u.searchParams.get('statement_cache_size') ?? String(STATEMENT_CACHE_DEFAULT);
    u.searchParams.delete('schema');
    u.searchParams.delete('statement_cache_size');
    if (schema && !IDENT.test(schema)) throw new Error('database URL: schema must be a lower-case identifier');
    if (!/^\d{1,5}$/.test(statementCache)) throw new Error('database URL: statement_cache_size must be a whole number (0 turns it off)');
    if (schema && !opts.readOnly) {
      const admin = new pg.Client({ connectionString: u.toString() });
      await admin.connect();
      try {
        await admin.query(`create schema if not exists "${schema}"`);
      } catch (e) {
        // Two processes creating it at once: the second one's IF NOT EXISTS can still fail on the catalog's
        // unique index.
        const { rowCount } = await admin.query('select 1 from pg_catalog.pg_namespace where nspname = $1', [schema]);
        if (!rowCount) throw e;
      } finally {
        await admin.end();
      }
    }
    const pool = new pg.Pool({
      connectionString: u.toString(),
      max: opts.poolSize ?? 10,
      ...(schema || opts.readOnly
        ? { options: [schema ? `-c search_path="${schema}"` : '', opts.readOnly ? '-c default_transaction_read_only=on' : ''].filter(Boolean).join(' ') }
        : {}),
    });
    pool.on('error', () => {
      /* a broken idle connection is dropped by the pool; queries report their own errors */
    });
    if (Number(statementCache) > 0) pool.on('connect', (client) => cacheStatements(client, Number(statementCache)));
    const db = new Kysely<DB>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
    return {
      db,
      dialect: 'postgres',
      schema: schema ?? undefined,
      close: () => db.destroy(),
      ping: async () => {
        await sql`select 1`.execute(db);
      },
    };
  }
  if (url.startsWith('mysql://')) {
    const { openMysql } = await import('./mysql.js');
    const db = await openMysql<DB>(url, opts.poolSize ?? 10, opts.readOnly);
    return {
      db,
      dialect: 'mysql',
      close: () => db.destroy(),
      ping: async () => {
        await sql`select 1`.execute(db);
      },
    };
  }
  throw new Error('database URL: only sqlite://, postgres:// and mysql:// are supported');
}

const SQLITE_BUSY_TIMEOUT_MS = 5000;

const sqliteHandles = new WeakMap<object, SQLite.Database>();

/**
 * The better-sqlite3 handle (with its statement cache) behind a Kysely instance made by openDatabase; undefined
 * for PostgreSQL, MySQL and transactions (a Transaction is a different instance).
 */
export function sqliteHandleOf(db: object): SQLite.Database | undefined {
  return sqliteHandles.get(db);
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * The handle Kysely's SQLite driver gets: prepare(sql) returns a cached statement for that SQL text
 * (LRU, 500 entries), because the driver prepares on every execution and preparing costs about as much
 * as running a small query. The driver only calls prepare() and then reader/all/run/iterate on the
 * result, and never changes a statement's modes (raw/pluck/expand/safeIntegers), so a cached statement
 * behaves exactly like a fresh one. A statement that is still iterating (a stream in progress) is busy
 * and cannot run again: then a fresh one is prepared. SQLite re-prepares a statement by itself when the
 * schema changed since it was prepared.
 */
export function cachingStatements(handle: SQLite.Database): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string): SQLite.Statement => {
    const hit = cache.get(source);
    if (hit) {
      cache.delete(source);
      cache.set(source, hit);
      if (!hit.busy) return hit;
      return handle.prepare(source);
    }
    const stmt = handle.prepare(source);
    cache.set(source, stmt);
    if (cache.size > STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return stmt;
  };
  return new Proxy(handle, {
    get(target, prop) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Applies every pending migration of one deployable, in name order, inside its own bookkeeping tables. One
 * process at a time migrates a database: another one starting alongside (the server and a CLI command) waits,
 * then finds the migrations applied. PostgreSQL and MySQL: Kysely's Migrator holds an advisory lock
 * (pg_advisory_lock, GET_LOCK) over the run; SQLite: it takes none, so the whole run is one exclusive
 * transaction here (which also makes a failed run leave nothing behind), so a SQLite migration never opens a
 * transaction of its own.
 */
export async function migrate(database: Database<any>, tablePrefix: string, migrations: Record<string, Migration>) {
  const handle = sqliteHandleOf(database.db);
  if (!handle) return runMigrations(database, tablePrefix, migrations);
  await whenUnlocked(handle, () => handle.exec('begin exclusive'));
  try {
    await runMigrations(database, tablePrefix, migrations);
  } catch (e) {
    if (handle.inTransaction) handle.exec('rollback');
    throw e;
  }
  handle.exec('commit');
}

/** How long a process waits for another one's SQLite migration, like Kysely's hour on PostgreSQL and MySQL. */
const MIGRATION_LOCK_WAIT_MS = 60 * 60 * 1000;
const MIGRATION_LOCK_POLL_MS = 25;

/**
 * Runs `step` once the lock it needs is free, waiting for another process without blocking this one's event
 * loop (SQLite's busy timeout waits synchronously, gives up after SQLITE_BUSY_TIMEOUT_MS, and is skipped
 * altogether when waiting could deadlock): tried with no busy wait, then again after a pause.
 */
async function whenUnlocked<T>(handle: SQLite.Database, step: () => T): Promise<T> {
  const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
  handle.pragma('busy_timeout = 0');
  try {
    for (;;) {
      try {
        return step();
      } catch (e) {
        // SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, …).
        if (!String((e as { code?: string }).code).startsWith('SQLITE_BUSY') || Date.now() > deadline) throw e;
      }
      await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
    }
  } finally {
    handle.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  }
}

async function runMigrations(database: Database<any>, tablePrefix: string, migrations: Record<string, Migration>) {
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  // MySQL: the tables a migration creates get InnoDB, utf8mb4 and a binary collation (mysql.ts).
  let db = database.db;
  if (database.dialect === 'mysql') {
    const { binaryCollation, MysqlTableOptionsPlugin } = await import('./mysql.js');
    db = db.withPlugin(new MysqlTableOptionsPlugin(await binaryCollation(db)));
  }
  const migrator = new Migrator({
    db,
    // Kysely looks for its bookkeeping tables across all schemas unless told which one is ours.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
    provider,
    migrationTableName: `${tablePrefix}_migrations`,
    migrationLockTableName: `${tablePrefix}_migrations_lock`,
    // Numbered blocks (0900_ for imports) sit after later ordinary migrations in name order: a database that
    // already ran 0900 must still get a new 0015.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message}`);
  }
}

/** True for a unique-constraint violation on any supported dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e?.code === '23505' || e?.code === 'ER_DUP_ENTRY';
}

export * from './dialect.js';
export * from './retry.js';
