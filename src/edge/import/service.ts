import type { ImportSession, TableReport } from '../../kit/db/batch-import.js';
import type { Source } from '../../kit/db/source.js';
import { appendAudit } from '../audit/store.js';
import { importLogs } from './logs.js';
import { redemptionsStep } from './redemptions.js';
import { tokensStep } from './tokens.js';
import { mirrorUserStatus } from './user-status.js';
import { walletsStep, type UserLookup } from './wallets.js';

const ACTOR = 'cli:import';

export interface EdgeImportOptions {
  /** The account user id each new-api user became (from the account import's map). */
  userIdOf: UserLookup;
  /** Every imported account user, and those of them whose account is disabled (their keys are turned off). */
  accounts: { all: number[]; disabled: ReadonlySet<number> };
  /** Also the last `days` days of new-api's usage log (consume and top-up rows) from `source`; none when absent. */
  logs?: { source: Source; days: number };
}

/**
 * The edge half of `import new-api`: each imported user's wallet (balance, used quota, request count), their
 * tokens (the customer's `sk-…` key keeps working, unless the account is disabled), the unused top-up codes
 * and, when asked, the recent usage log, in that order (tokens find their wallets' owners, logs their tokens). Runs after the account half,
 * whose map says which account user a new-api user became.
 */
export async function importEdge(source: Source, session: ImportSession, o: EdgeImportOptions): Promise<TableReport[]> {
  const reports = [
    await session.run(walletsStep(await source.rows('users'), o.userIdOf)),
    await session.run(tokensStep(await source.rows('tokens'), o.userIdOf)),
    await session.run(redemptionsStep(await source.rows('redemptions'), o.userIdOf)),
    await mirrorUserStatus(session, o.accounts.all, o.accounts.disabled, ACTOR),
  ];
  if (o.logs) reports.push(await importLogs(o.logs.source, session, o.userIdOf, o.logs.days));
  const counts = Object.fromEntries(reports.map((r) => [r.table, { imported: r.imported, updated: r.updated }]));
  if (!session.opts.dryRun && reports.some((r) => r.imported + r.updated > 0)) {
    await session.batch((trx) => appendAudit(trx, ACTOR, 'import', { source: session.opts.source, ...counts }));
  }
  return reports;
}
