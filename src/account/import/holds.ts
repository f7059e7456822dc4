import type { Kysely } from 'kysely';
import type { Notice, Problem } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { int, text, truthy } from '../../kit/db/source.js';
import { nowSeconds, USER_STATUS } from '../db.js';
import { totpSecret } from './factors.js';
import { HELD_KIND, passwordIssue, type SourceRow } from './users.js';

const deleted = (s: SourceRow) => s.deleted_at !== null && s.deleted_at !== undefined;

/** Source ids of the users whose enabled 2FA cannot come along (its secret does not decode). */
export function heldUserIds(twoFas: SourceRow[]): Set<string> {
  const out = new Set<string>();
  for (const t of twoFas) if (!deleted(t) && truthy(t.is_enabled) && !totpSecret(t.secret)) out.add(String(t.user_id));
  return out;
}

/**
 * Holds each imported user of `held` so that none loses its second factor unseen: disabled (its sessions
 * end with the auth version) and marked in the import map, so that no later run enables it; `user enable`
 * is the way back. A user whose 2FA is here already (from an earlier run) has lost nothing and is left alone.
 */
export async function holdUsers(trx: Kysely<any>, source: string, held: Set<string>, changedUsers: Set<number>) {
  const ids = await importMap.all(trx, source, 'users');
  for (const sourceId of held) {
    const userId = ids.get(sourceId);
    if (userId === undefined || (await importMap.get(trx, source, HELD_KIND, sourceId))) continue;
    if (await trx.selectFrom('two_factor').select('user_id').where('user_id', '=', userId).executeTakeFirst()) continue;
    await trx
      .updateTable('users')
      .set({ status: USER_STATUS.disabled })
      .set((eb: any) => ({ auth_version: eb('auth_version', '+', 1) }))
      .where('id', '=', userId)
      .execute();
    await importMap.put(trx, source, HELD_KIND, sourceId, userId, {}, nowSeconds(), true);
    changedUsers.add(userId);
  }
}

const bySourceId = (a: Problem & { n: number }, b: Problem & { n: number }) => a.n - b.n;
const name = (username: string, sourceId: unknown) => `${username} (new-api id ${String(sourceId)})`;

/** The users an admin must act on, as the report lists them: held ones still disabled, then those without a password. */
export async function noticesOf(trx: Kysely<any>, source: string, users: SourceRow[]): Promise<Notice[]> {
  const held = await trx
    .selectFrom('import_map as m')
    .innerJoin('users as u', 'u.id', 'm.local_id')
    .leftJoin('two_factor as t', 't.user_id', 'u.id')
    .select(['m.source_id', 'u.username', 't.user_id as has_2fa'])
    .where('m.source', '=', source)
    .where('m.kind', '=', HELD_KIND)
    .where('u.status', '=', USER_STATUS.disabled)
    .execute();
  const heldItems = held.map((r: any) => ({
    n: int(r.source_id),
    id: name(r.username, r.source_id),
    reason: r.has_2fa === null || r.has_2fa === undefined ? 'undecodable 2FA secret in new-api' : '2FA secret imported since, the account still disabled',
  }));
  const bare = await trx
    .selectFrom('import_map as m')
    .innerJoin('users as u', 'u.id', 'm.local_id')
    .select(['m.source_id', 'u.username'])
    .where('m.source', '=', source)
    .where('m.kind', '=', 'users')
    .where('u.password_hash', 'is', null)
    .execute();
  const sourceRows = new Map(users.map((s) => [String(s.id), s]));
  const bareItems = bare.map((r: any) => {
    const s = sourceRows.get(String(r.source_id));
    return { n: int(r.source_id), id: name(r.username, r.source_id), reason: (s && passwordIssue(text(s.password))) ?? 'no password here' };
  });
  const strip = (list: (Problem & { n: number })[]) => list.sort(bySourceId).map(({ id, reason }) => ({ id, reason }));
  return [
    {
      heading: 'users held, disabled until an admin acts (their second factor was not imported)',
      action:
        '`npm run cli -- user enable --username NAME` lets the user sign in with the password and turns their API keys back on; have them set up 2FA again at once (to keep the old secret instead, fix it in new-api and import again first; the import never enables a held account itself)',
      items: strip(heldItems),
    },
    {
      heading: 'users without a usable password',
      action:
        'each signs in with a linked provider or a passkey, or sets a password by the reset email (GET /api/reset_password) if an email address is set; for one with none of these, set a password or an email address in new-api and import again',
      items: strip(bareItems),
    },
  ];
}
