import type { Kysely } from 'kysely';
import { skip, type TableStep } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { int, text, unixSeconds } from '../../kit/db/source.js';
import { nowSeconds, ROLE, USER_STATUS } from '../db.js';
import { usersStore } from '../users/store.js';
import { affCode } from '../users/service.js';

export type SourceRow = Record<string, unknown>;

const ROLES = new Set<number>([ROLE.user, ROLE.admin, ROLE.root]);
const HASH = /^(\$2[aby]\$\d\d\$|\$argon2id?\$)/;

/** The import map's kind marking a user held by the import (see holds.ts); no later run enables it. */
export const HELD_KIND = 'users:held';

/** Why a new-api password hash cannot be used here (null when it can: bcrypt or argon2). */
export function passwordIssue(hash: string): string | null {
  if (HASH.test(hash)) return null;
  if (!hash) return 'empty password';
  if (/^[0-9a-f]{32}$/i.test(hash)) return 'an MD5 hash (not accepted here)';
  return 'a password hash of an unknown kind';
}

/** A new-api user's fields as ours hold them (the reference's roles and statuses are the same numbers). */
export function userFields(s: SourceRow) {
  const hash = text(s.password);
  const email = text(s.email).trim().toLowerCase();
  return {
    username: text(s.username).trim(),
    display_name: text(s.display_name).trim() || text(s.username).trim(),
    email: email || null,
    // bcrypt hashes are kept as they are: the next password login checks and replaces them by argon2id.
    password_hash: passwordIssue(hash) ? null : hash,
    role: int(s.role, ROLE.user),
    status: int(s.status, USER_STATUS.enabled) === USER_STATUS.enabled ? USER_STATUS.enabled : USER_STATUS.disabled,
    group: text(s.group).trim() || 'default',
  };
}

const chars = (v: string) => [...v].length;

/** Why a user cannot be written (names and roles); conflicts with local users are checked at write time. */
function problem(f: ReturnType<typeof userFields>): string | null {
  if (!f.username) return 'empty username';
  if (chars(f.username) > 64) return 'username longer than 64 characters';
  if (chars(f.display_name) > 64) return 'display name longer than 64 characters';
  if (f.email && f.email.length > 254) return 'email longer than 254 characters';
  if (chars(f.group) > 64) return 'group longer than 64 characters';
  if (!ROLES.has(f.role)) return `unknown role ${f.role}`;
  return null;
}

async function conflict(trx: Kysely<any>, f: { username?: string; email?: string | null }, self?: number): Promise<string | null> {
  if (f.username) {
    const u = await usersStore.byUsername(trx, f.username);
    if (u && Number(u.id) !== self) return 'username taken by a local user';
  }
  if (f.email) {
    const u = await usersStore.byEmail(trx, f.email);
    if (u && Number(u.id) !== self) return 'email taken by a local user';
  }
  return null;
}

/**
 * new-api `users` → our users. Soft-deleted users stay behind; a username or email already held by a
 * local user leaves the row out (no merging of accounts). A role, status or password change on a later
 * run bumps auth_version, so sessions opened under the old values end. A user in `held` (source ids whose
 * second factor cannot come along) is written disabled, and no run enables a held user.
 */
export function usersStep(rows: SourceRow[], changedUsers: Set<number>, source: string, held: Set<string>): TableStep<SourceRow> {
  return {
    table: 'users',
    rows,
    id: (s) => String(s.id),
    precheck: (s) => (s.deleted_at !== null && s.deleted_at !== undefined ? 'deleted in the source' : problem(userFields(s))),
    fields: (s) => userFields(s),
    async insert(trx, s) {
      const f = userFields(s);
      const c = await conflict(trx, f);
      if (c) return skip(c);
      const code = text(s.aff_code).trim();
      const free = code && code.length <= 32 && !(await trx.selectFrom('users').select('id').where('aff_code', '=', code).executeTakeFirst());
      return usersStore.insert(trx, {
        ...f,
        status: held.has(String(s.id)) ? USER_STATUS.disabled : f.status,
        aff_code: free ? code : affCode(),
        inviter_id: null,
        auth_version: 1,
        access_token_hash: null,
        created_at: unixSeconds(s.created_at) || nowSeconds(),
        deleted_at: null,
      });
    },
    async update(trx, localId, s, changed) {
      const f = userFields(s) as Record<string, unknown>;
      const patch: Record<string, unknown> = {};
      for (const k of changed) if (k in f) patch[k] = f[k];
      if (patch.status === USER_STATUS.enabled && (held.has(String(s.id)) || (await importMap.get(trx, source, HELD_KIND, String(s.id))))) delete patch.status;
      const c = await conflict(trx, patch as { username?: string; email?: string | null }, localId);
      if (c) return skip(c);
      if (Object.keys(patch).length === 0) return;
      const security = Object.keys(patch).some((k) => k === 'role' || k === 'status' || k === 'password_hash');
      let q = trx.updateTable('users').set(patch).where('id', '=', localId);
      if (security) q = q.set((eb: any) => ({ auth_version: eb('auth_version', '+', 1) }));
      await q.execute();
      if (security) changedUsers.add(localId);
    },
  };
}

/** Sets inviter_id from the reference's inviter_id once both users are here (left alone when already set). */
export async function linkInviters(trx: Kysely<any>, rows: SourceRow[], ids: Map<string, number>) {
  for (const s of rows) {
    const inviter = int(s.inviter_id, 0);
    const self = ids.get(String(s.id));
    const local = ids.get(String(inviter));
    if (!inviter || self === undefined || local === undefined) continue;
    await trx.updateTable('users').set({ inviter_id: local }).where('id', '=', self).where('inviter_id', 'is', null).execute();
  }
}
