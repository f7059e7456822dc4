// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import type { Command } from 'commander';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import type { Notice, TableReport } from '../kit/db/batch-import.js';
import type { Source } from '../kit/db/source.js';

type Boot = () => { config: Config; runtime: Runtime } | Promise<{ config: Config; runtime: Runtime }>;

/** The name the import map gives rows from new-api. */
export const NEW_API = 'new-api';

const PARTS = ['account', 'gateway', 'edge'] as const;

interface Options {
  dryRun: boolean;
  only?: string;
  batchSize?: number;
  /** The edge part also brings the usage log of the last this many days. */
  logsDays?: number;
  /** Where new-api's `logs` table is when not in --from (new-api's LOG_SQL_DSN). */
  logsFrom?: string;
}

async function accountPart(config: Config, runtime: Runtime, source: Source, o: Options) {
  const { ImportSession } = await import('../kit/db/batch-import.js');
  const { createAccountContext } = await import('../account/wiring.js');
  const { importAccount } = await import('../account/import/service.js');
  const { ctx, services } = await createAccountContext(config, runtime);
  const session = new ImportSession(ctx.database.db, { source: NEW_API, dryRun: o.dryRun, batchSize: o.batchSize });
  try {
    return await importAccount(ctx, services, source, session);
  } finally {
    await session.finish();
    await ctx.database.close();
  }
}

/** What the edge part needs of the account part: new-api id → account user id, and which of them are disabled. */
interface ImportedUsers {
  userIds: Map<string, number>;
  disabled: Set<number>;
}

/** Which account user each new-api user became, and which are disabled, as earlier runs left the account database (for --only edge). */
async function importedUsers(config: Config, runtime: Runtime): Promise<ImportedUsers> {
  const { createAccountContext } = await import('../account/wiring.js');
  const { importedUserIds, disabledAmong } = await import('../account/import/service.js');
  const { ctx } = await createAccountContext(config, runtime);
  try {
    const userIds = await importedUserIds(ctx.database.db, NEW_API);
    return { userIds, disabled: await disabledAmong(ctx.database.db, [...userIds.values()]) };
  } finally {
    await ctx.database.close();
  }
}

/** Wallets, tokens, codes and usage of the users the account part brought; a disabled user's keys turned off. */
async function edgePart(config: Config, runtime: Runtime, source: Source, logs: Source, o: Options, users: ImportedUsers) {
  const { userIds, disabled } = users;
  const { ImportSession } = await import('../kit/db/batch-import.js');
  const { createEdgeContext } = await import('../edge/app.js');
  const { importEdge } = await import('../edge/import/service.js');
  const e = await createEdgeContext(config, runtime);
  const session = new ImportSession(e.ctx.db, { source: NEW_API, dryRun: o.dryRun, batchSize: o.batchSize });
  try {
    return await importEdge(source, session, {
      userIdOf: (id) => userIds.get(id),
      accounts: { all: [...new Set(userIds.values())], disabled },
      logs: o.logsDays === undefined ? undefined : { source: logs, days: o.logsDays },
    });
  } finally {
    await session.finish();
    await e.close();
  }
}

async function gatewayPart(config: Config, runtime: Runtime, source: Source, o: Options) {
  const { ImportSession } = await import('../kit/db/batch-import.js');
  const { createGatewayContext } = await import('../gateway/app.js');
  const { importGateway } = await import('../gateway/import/service.js');
  const g = await createGatewayContext(config, runtime);
  const session = new ImportSession(g.ctx.db, { source: NEW_API, dryRun: o.dryRun, batchSize: o.batchSize });
  try {
    return await importGateway(g, source, session);
  } finally {
    await session.finish();
    await g.ctx.upstream.close();
    await g.ctx.database.close();
  }
}

/** Report lines made from other source tables (bindings from users and providers, wallets from users). */
const DERIVED = new Set(['bindings', 'wallets', "disabled users' keys"]);

/** Tables new-api's GORM models create: a source with none of them is not a new-api database. */
const NEW_API_TABLES = ['users', 'channels', 'abilities', 'tokens', 'logs', 'options', 'two_fas', 'two_fa_backup_codes', 'passkey_credentials', 'redemptions'];

/**
 * Refuses a source that cannot be new-api's database before anything is opened for writing: one with none of
 * its tables (a wrong file, an empty database, a wrong schema), or without the table a part imports from.
 */
function checkSourceTables(tables: Set<string>, only?: string) {
  if (!NEW_API_TABLES.some((t) => tables.has(t))) {
    throw new Error("the source has none of new-api's tables (users, channels, …): check that --from names new-api's database; nothing was imported");
  }
  // Each part's own table, and what the other part would import on its own.
  const needs = [
    { part: 'account', table: 'users', other: '--only gateway imports its channels alone' },
    { part: 'gateway', table: 'channels', other: '--only account imports its users alone' },
    { part: 'edge', table: 'users', other: '--only gateway imports its channels alone' },
  ];
  for (const n of needs) {
    if ((only === undefined || only === n.part) && !tables.has(n.table)) {
      const hint = only === undefined ? ` (${n.other})` : '';
      throw new Error(`the source has no ${n.table} table, so it is not a whole new-api database; nothing was imported${hint}`);
    }
  }
}

/** Runs the import and answers its report (the tables, then the users an admin must act on); the source is only read. */
export async function importNewApi(boot: Boot, from: string, opts: Options): Promise<{ reports: TableReport[]; notices: Notice[] }> {
  if (opts.only !== undefined && !(PARTS as readonly string[]).includes(opts.only)) throw new Error('--only must be account, gateway or edge');
  if (opts.logsDays !== undefined && opts.only !== undefined && opts.only !== 'edge') throw new Error('--logs-days belongs to the edge part: leave out --only or use --only edge');
  if (opts.logsFrom !== undefined && opts.logsDays === undefined) throw new Error('--logs-from needs --logs-days');
  const { config, runtime } = await boot();
  const { openSource } = await import('../kit/db/source.js');
  let source: Source | undefined;
  let logs: Source | undefined;
  try {
    source = await openSource(from);
    checkSourceTables(source.tables, opts.only);
    logs = opts.logsFrom === undefined ? source : await openSource(opts.logsFrom);
    const reports: TableReport[] = [];
    let notices: Notice[] = [];
    const runs = (part: string) => opts.only === undefined || opts.only === part;
    let users: ImportedUsers | undefined;
    if (runs('account')) {
      const account = await accountPart(config, runtime, source, opts);
      reports.push(...account.reports);
      notices = account.notices;
      users = { userIds: account.userIds, disabled: account.disabled };
    }
    if (runs('gateway')) reports.push(...(await gatewayPart(config, runtime, source, opts)));
    if (runs('edge')) reports.push(...(await edgePart(config, runtime, source, logs, opts, users ?? (await importedUsers(config, runtime)))));
    for (const r of reports) if (!DERIVED.has(r.table) && !(r.table === 'logs' ? logs : source).tables.has(r.table)) r.note = 'not present in the source';
    return { reports, notices };
  } finally {
    if (logs !== source) await logs?.close();
    await source?.close();
    await runtime.close();
  }
}

/**
 * `import new-api --from …`: users and their factors into the account database, channels into the gateway's,
 * the users' wallets, tokens, unused top-up codes (and, with --logs-days, recent usage) into the edge's.
 */
export function registerImportCommands(program: Command, boot: Boot) {
  program
    .command('import')
    .description('bring data in from another system')
    .command('new-api')
    .description('import users, 2FA, passkeys, OAuth bindings, channels, balances, tokens and top-up codes from a new-api database (read-only); safe to run again')
    .requiredOption('--from <database>', 'the new-api database: a SQLite file path, sqlite://…, postgres://… or mysql://…')
    .option('--dry-run', 'write nothing; print what an import would do')
    .option('--only <part>', 'account, gateway or edge (default: all three; edge needs the account part run before)')
    .option('--batch-size <n>', 'rows per transaction (default 200)')
    .option('--logs-days <n>', "also the last n days of new-api's usage log (consume and top-up rows), for the usage page")
    .option('--logs-from <database>', "where new-api's logs table is when new-api kept it apart (its LOG_SQL_DSN); same forms as --from")
    .action(async (o: { from: string; dryRun?: boolean; only?: string; batchSize?: string; logsDays?: string; logsFrom?: string }) => {
      const batchSize = o.batchSize === undefined ? undefined : Number(o.batchSize);
      if (batchSize !== undefined && (!/^\d+$/.test(o.batchSize!) || batchSize < 1 || batchSize > 10_000)) throw new Error('--batch-size must be an integer 1-10000');
      const logsDays = o.logsDays === undefined ? undefined : Number(o.logsDays);
      if (logsDays !== undefined && (!/^\d+$/.test(o.logsDays!) || logsDays < 1 || logsDays > 3650)) throw new Error('--logs-days must be an integer 1-3650');
      const { formatReport } = await import('../kit/db/batch-import.js');
      const { reports, notices } = await importNewApi(boot, o.from, { dryRun: !!o.dryRun, only: o.only, batchSize, logsDays, logsFrom: o.logsFrom });
      console.log(formatReport(reports, !!o.dryRun, notices));
      const failed = reports.reduce((n, r) => n + r.failed, 0);
      if (failed) throw new Error(`${failed} rows were in batches that failed and were rolled back (see the report); run again after fixing the cause`);
    });
}
