import {
  CompiledQuery,
  CreateTableNode,
  DataTypeNode,
  InsertQueryNode,
  Kysely,
  MysqlDialect,
  OnDuplicateKeyNode,
  OperationNodeTransformer,
  OrActionNode,
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import mysql from 'mysql2';

/**
 * Every connection's session: utf8mb4, UTC, strict (a value that does not fit fails instead of being cut),
 * READ COMMITTED like PostgreSQL's default, and the two ANSI modes that let the raw SQL the stores share
 * with PostgreSQL and SQLite run unchanged: "double quotes" quote identifiers and || concatenates.
 * Kysely itself quotes with backticks and writes string literals in single quotes, so neither mode
 * changes what it generates. Backslash escapes stay on: mysql2 escapes parameters with backslashes.
 */
const SESSION = [
  `set session sql_mode = 'STRICT_ALL_TABLES,ANSI_QUOTES,PIPES_AS_CONCAT,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'`,
  `set session time_zone = '+00:00'`,
  `set session transaction isolation level read committed`,
];

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,63}$/;

/** The database a mysql:// URL names: `?database=NAME`, else the URL's path. */
export function mysqlDatabaseName(url: string): string {
  const u = new URL(url);
  const name = u.searchParams.get('database') ?? decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!IDENT.test(name)) throw new Error('database URL: a mysql:// URL must name its database (path or ?database=), an identifier');
  return name;
}

/** mysql2 pool options of a mysql:// URL (the database taken out of the query string). */
function poolOptions(url: string, poolSize: number): mysql.PoolOptions {
  const u = new URL(url);
  const database = mysqlDatabaseName(url);
  u.searchParams.delete('database');
  u.pathname = '/' + database;
  return {
    uri: u.toString(),
    connectionLimit: poolSize,
    charset: 'UTF8MB4_GENERAL_CI',
    timezone: 'Z',
    // BIGINT as a JS number (every such value here is well below 2^53), DECIMAL (SUM, AVG) too, like the
    // pg int8/numeric parsers in index.ts.
    supportBigNumbers: false,
    bigNumberStrings: false,
    decimalNumbers: true,
  };
}

/** Creates the URL's database (utf8mb4) when the server says it does not exist, like ?schema= on PostgreSQL. */
async function ensureDatabase(url: string) {
  const options = poolOptions(url, 1);
  // Copies: mysql2 writes the parsed URL's parts into the options object it is given.
  const probe = mysql.createConnection({ ...options });
  probe.on('error', () => {
    /* reported to the connect callback */
  });
  const missing = await new Promise<boolean>((resolve, reject) =>
    probe.connect((err) => (err ? ((err as { code?: string }).code === 'ER_BAD_DB_ERROR' ? resolve(true) : reject(err)) : resolve(false))),
  ).finally(() => probe.destroy());
  if (!missing) return;
  const u = new URL(options.uri!);
  const name = u.pathname.slice(1);
  u.pathname = '/';
  const admin = mysql.createConnection({ ...poolOptions(url, 1), uri: u.toString() }).promise();
  try {
    await admin.query(`create database if not exists \`${name}\` character set utf8mb4`);
  } finally {
    admin.destroy();
  }
}

/** `readOnly`: every session refuses writes, and a missing database is an error instead of being created. */
export async function openMysql<DB>(url: string, poolSize: number, readOnly = false): Promise<Kysely<DB>> {
  if (!readOnly) await ensureDatabase(url);
  const session = readOnly ? [...SESSION, 'set session transaction read only'] : SESSION;
  const pool = mysql.createPool(poolOptions(url, poolSize));
  pool.on('connection', (conn) => conn.on('error', () => {
    /* a broken idle connection is dropped by the pool; queries report their own errors */
  }));
  return new Kysely<DB>({
    dialect: new MysqlDialect({
      pool,
      onCreateConnection: async (conn) => {
        for (const s of session) await conn.executeQuery(CompiledQuery.raw(s));
      },
    }),
    plugins: [new MysqlUpsertPlugin()],
  });
}

/**
 * MySQL has no ON CONFLICT: an insert written with onConflict(...) becomes INSERT IGNORE (doNothing) or
 * ON DUPLICATE KEY UPDATE (doUpdateSet), so stores write one upsert for every dialect. MySQL picks the
 * conflicting key itself, which is the same one here: every upsert targets the table's only unique key.
 */
export class MysqlUpsertPlugin implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (!InsertQueryNode.is(node) || !node.onConflict) return node;
    const oc = node.onConflict;
    if (oc.updateWhere || oc.indexWhere) throw new Error('MySQL: onConflict with a where clause is not supported');
    if (oc.doNothing) return InsertQueryNode.cloneWith(node, { onConflict: undefined, orAction: OrActionNode.create('ignore') });
    return InsertQueryNode.cloneWith(node, { onConflict: undefined, onDuplicateKey: OnDuplicateKeyNode.create(oc.updates ?? []) });
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * The binary collation of tables a migration creates: names, tokens and hashes compare byte for byte, as
 * on PostgreSQL and SQLite (MySQL's default collations ignore case and accents), without PAD SPACE where
 * the server has a NO PAD one ('a' and 'a ' differ).
 */
export async function binaryCollation(db: Kysely<any>): Promise<string> {
  const { rows } = await sql<{ name: string }>`select collation_name as name from information_schema.collations
    where collation_name in ('utf8mb4_nopad_bin', 'utf8mb4_0900_bin')`.execute(db);
  return rows[0]?.name ?? 'utf8mb4_bin';
}

/** MySQL's TEXT holds 64 KB; PostgreSQL's and SQLite's text has no such limit, MEDIUMTEXT holds 16 MB. */
class MediumText extends OperationNodeTransformer {
  protected override transformDataType(node: DataTypeNode): DataTypeNode {
    return node.dataType === 'text' ? DataTypeNode.create('mediumtext' as never) : node;
  }
}

/**
 * Gives every CREATE TABLE the InnoDB engine and utf8mb4 with the given collation, and makes `text` columns
 * (of CREATE TABLE and ALTER TABLE … ADD COLUMN) MEDIUMTEXT.
 */
export class MysqlTableOptionsPlugin implements KyselyPlugin {
  private readonly text = new MediumText();

  constructor(private readonly collation: string) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'AlterTableNode') return this.text.transformNode(node, args.queryId);
    if (node.kind !== 'CreateTableNode') return node;
    const table = this.text.transformNode(node, args.queryId);
    return CreateTableNode.cloneWithEndModifier(table, sql.raw(`engine = InnoDB default charset = utf8mb4 collate = ${this.collation}`).toOperationNode());
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
