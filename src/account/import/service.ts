import type { Kysely } from 'kysely';
import type { ImportSession, Notice, TableReport } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import type { Source } from '../../kit/db/source.js';
import type { AccountContext } from '../context.js';
import { USER_STATUS } from '../db.js';
import type { TwoFactorService } from '../two-factor/service.js';
import type { SessionsService } from '../sessions/service.js';
import { bindingRows, bindingsStep } from './bindings.js';
import { backupCodesStep, passkeysStep, twoFactorStep } from './factors.js';
import { heldUserIds, holdUsers, noticesOf } from './holds.js';
import { linkInviters, usersStep } from './users.js';

/** The account user id each imported new-api user became, by new-api id. */
export function importedUserIds(db: Kysely<any>, source: string): Promise<Map<string, number>> {
  return importMap.all(db, source, 'users');
}

/** Of these account users, those that are disabled or deleted: their API keys must not work. */
export async function disabledAmong(db: Kysely<any>, ids: number[]): Promise<Set<number>> {
  const out = new Set<number>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('users')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .where((eb: any) => eb.or([eb('status', '<>', USER_STATUS.enabled), eb('deleted_at', 'is not', null)]))
      .execute();
    for (const r of rows) out.add(Number(r.id));
  }
  return out;
}

/**
 * The account half of `import new-api`: users (bcrypt hashes kept), their provider identities, TOTP
 * secrets with backup codes, and passkeys, in that order (each later table finds its users in the import map).
 * A user whose enabled 2FA cannot come along is held (holds.ts); the notices name the users an admin must
 * act on.
 */
export async function importAccount(
  ctx: AccountContext,
  { twoFactor, sessions }: { twoFactor: TwoFactorService; sessions: SessionsService },
  source: Source,
  session: ImportSession,
): Promise<{ reports: TableReport[]; notices: Notice[]; userIds: Map<string, number>; disabled: Set<number> }> {
  const name = session.opts.source;
  const users = await source.rows('users');
  const twoFas = await source.rows('two_fas');
  const held = heldUserIds(twoFas);
  const changedUsers = new Set<number>();
  const reports: TableReport[] = [await session.run(usersStep(users, changedUsers, name, held))];
  await session.batch(async (trx) => linkInviters(trx, users, await importMap.all(trx, name, 'users')));
  await session.batch((trx) => holdUsers(trx, name, held, changedUsers));
  const bindings = bindingRows(users, await source.rows('user_oauth_bindings'), await source.rows('custom_oauth_providers'));
  reports.push(await session.run(bindingsStep(bindings, name)));
  reports.push(await session.run(twoFactorStep(twoFas, name, twoFactor.sealSecret)));
  reports.push(await session.run(backupCodesStep(await source.rows('two_fa_backup_codes'), name)));
  reports.push(await session.run(passkeysStep(await source.rows('passkey_credentials'), name, ctx.config.passkey.rpId)));
  const notices = await session.batch((trx) => noticesOf(trx, name, users));
  // Read inside the session: in a dry run these are the ids the users would get (the edge half needs them).
  const userIds = await session.batch((trx) => importedUserIds(trx, name));
  const disabled = await session.batch((trx) => disabledAmong(trx, [...userIds.values()]));
  if (!session.opts.dryRun) for (const id of changedUsers) await sessions.invalidateUser(id);
  return { reports, notices, userIds, disabled };
}
