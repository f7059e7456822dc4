import type { Kysely } from 'kysely';
import { skip, type Skip, type TableStep } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { text } from '../../kit/db/source.js';
import { nowSeconds } from '../db.js';
import { BINDING_COLUMNS } from '../migrations/0200_email_oauth.js';
import { bindingsStore, type BindingColumn } from '../bindings/store.js';
import type { SourceRow } from './users.js';

/** One provider identity of a user: a users column (GitHub, Discord, OIDC, LinuxDO, WeChat, Telegram) or a custom provider's binding. */
export interface Binding {
  id: string;
  userId: string;
  column?: BindingColumn;
  slug?: string;
  value: string;
}

/** The identities of new-api users: their binding columns and user_oauth_bindings (by provider slug). */
export function bindingRows(users: SourceRow[], oauth: SourceRow[], providers: SourceRow[]): Binding[] {
  const out: Binding[] = [];
  for (const u of users) {
    if (u.deleted_at !== null && u.deleted_at !== undefined) continue;
    for (const column of BINDING_COLUMNS) {
      const value = text(u[column]).trim();
      if (value) out.push({ id: `${u.id}:${column}`, userId: String(u.id), column, value });
    }
  }
  const slugs = new Map(providers.map((p) => [String(p.id), text(p.slug).trim().toLowerCase()]));
  for (const b of oauth) {
    out.push({ id: `oauth:${b.id}`, userId: String(b.user_id), slug: slugs.get(String(b.provider_id)) ?? '', value: text(b.provider_user_id).trim() });
  }
  return out;
}

async function bind(trx: Kysely<any>, source: string, b: Binding, replacing: boolean): Promise<number | Skip> {
  const local = await importMap.get(trx, source, 'users', b.userId);
  if (!local) return skip('its user was not imported');
  const userId = local.localId;
  if (b.column) {
    const holder = await bindingsStore.userByColumn(trx, b.column, b.value);
    if (holder && Number(holder.id) !== userId) return skip('identity bound to another local user');
    const user = await bindingsStore.userById(trx, userId);
    if (!user) return skip('its user was deleted here');
    const current = (user as Record<string, unknown>)[b.column];
    if (current && current !== b.value && !replacing) return skip('the local user is bound to another identity of this provider');
    if (current !== b.value) await bindingsStore.setColumn(trx, userId, b.column, b.value);
    return userId;
  }
  const holder = await bindingsStore.userByCustom(trx, b.slug!, b.value);
  if (holder && Number(holder.id) !== userId) return skip('identity bound to another local user');
  const mine = (await bindingsStore.customOf(trx, userId)).find((c) => c.provider_slug === b.slug);
  if (mine && mine.provider_user_id !== b.value && !replacing) return skip('the local user is bound to another identity of this provider');
  if (!mine || mine.provider_user_id !== b.value) await bindingsStore.setCustom(trx, userId, b.slug!, b.value, nowSeconds());
  return userId;
}

/** Provider identities → the users binding columns and user_oauth_bindings; conflicts leave the identity out. */
export function bindingsStep(rows: Binding[], source: string): TableStep<Binding> {
  return {
    table: 'bindings',
    rows,
    id: (b) => b.id,
    precheck(b) {
      if (b.slug === '') return 'its custom OAuth provider is missing from the source';
      if (!b.value) return 'empty provider user id';
      if (b.value.length > (b.column ? 128 : 256)) return 'provider user id too long';
      return null;
    },
    fields: (b) => ({ user: b.userId, provider: b.column ?? b.slug, value: b.value }),
    insert: (trx, b) => bind(trx, source, b, false),
    async update(trx, _localId, b) {
      const r = await bind(trx, source, b, true);
      if (typeof r !== 'number') return r;
    },
  };
}
