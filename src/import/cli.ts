import type { Command } from 'commander';
import type { Config } from '../config/index.js';
import type { Runtime } from '../runtime.js';
import { formatReport, ImportSession, type TableReport } from '../kit/db/batch-import.js';
import { openSource, type Source } from '../kit/db/source.js';
import { createAccountContext } from '../account/app.js';
import { importAccount } from '../account/import/service.js';
import { createGatewayContext } from '../gateway/app.js';
import { importGateway } from '../gateway/import/service.js';

type Boot = () => { config: Config; runtime: Runtime };

/** The name the import map gives rows from new-api. */
export const NEW_API = 'new-api';

const PARTS = ['account', 'gateway'] as const;

interface Options {
  dryRun: boolean;
  only?: string;
  batchSize?: number;
}

async function accountPart(config: Config, runtime: Runtime, source: Source, o: Options) {
  const ctx = await createAccountContext(config, runtime);
  const session = new ImportSession(ctx.database.db, { source: NEW_API, dryRun: o.dryRun, batchSize: o.batchSize });
  try {
    return await importAccount(ctx, source, session);
  } finally {
    await session.finish();
    await ctx.database.close();
  }
}

async function gatewayPart(config: Config, runtime: Runtime, source: Source, o: Options) {
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

/** Runs the import and answers its report; the source is only read. */
export async function importNewApi(boot: Boot, from: string, opts: Options): Promise<TableReport[]> {
  if (opts.only !== undefined && !(PARTS as readonly string[]).includes(opts.only)) throw new Error('--only must be account or gateway');
  const { config, runtime } = boot();
  let source: Source | undefined;
  try {
    source = await openSource(from);
    const reports: TableReport[] = [];
    if (opts.only !== 'gateway') reports.push(...(await accountPart(config, runtime, source, opts)));
    if (opts.only !== 'account') reports.push(...(await gatewayPart(config, runtime, source, opts)));
    for (const r of reports) if (r.table !== 'bindings' && !source.tables.has(r.table)) r.note = 'not present in the source';
    return reports;
  } finally {
    await source?.close();
    await runtime.close();
  }
}

/** `import new-api --from …`: users and their factors into the account database, channels into the gateway's. */
export function registerImportCommands(program: Command, boot: Boot) {
  program
    .command('import')
    .description('bring data in from another system')
    .command('new-api')
    .description('import users, 2FA, passkeys, OAuth bindings and channels from a new-api database (read-only); safe to run again')
    .requiredOption('--from <database>', 'the new-api database: a SQLite file path, sqlite://…, postgres://… or mysql://…')
    .option('--dry-run', 'write nothing; print what an import would do')
    .option('--only <part>', 'account or gateway (default: both)')
    .option('--batch-size <n>', 'rows per transaction (default 200)')
    .action(async (o: { from: string; dryRun?: boolean; only?: string; batchSize?: string }) => {
      const batchSize = o.batchSize === undefined ? undefined : Number(o.batchSize);
      if (batchSize !== undefined && (!/^\d+$/.test(o.batchSize!) || batchSize < 1 || batchSize > 10_000)) throw new Error('--batch-size must be an integer 1-10000');
      const reports = await importNewApi(boot, o.from, { dryRun: !!o.dryRun, only: o.only, batchSize });
      console.log(formatReport(reports, !!o.dryRun));
      const failed = reports.reduce((n, r) => n + r.failed, 0);
      if (failed) throw new Error(`${failed} rows were in batches that failed and were rolled back (see the report); run again after fixing the cause`);
    });
}
