import type { Kysely } from 'kysely';
import type { GatewayDB } from '../db.js';
import { nowSeconds } from '../db.js';

/** SQL of the staff administration (GS06–GS14); the rules are in admin-service.ts. */

export async function staffById(db: Kysely<GatewayDB>, id: number) {
  return db.selectFrom('staff').select(['id', 'name', 'kind', 'role', 'created_at', 'disabled_at', 'totp_secret']).where('id', '=', id).executeTakeFirst();
}

export async function nameTaken(db: Kysely<GatewayDB>, name: string): Promise<boolean> {
  return (await db.selectFrom('staff').select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
}

/** Every identity with its permission rows and its live (unrevoked, unexpired) token count. */
export async function staffOverview(db: Kysely<GatewayDB>) {
  const now = nowSeconds();
  const [staff, permissions, tokens] = await Promise.all([
    db
      .selectFrom('staff')
      .select(['id', 'name', 'kind', 'role', 'created_at', 'disabled_at'])
      .select((eb) => eb.case().when('totp_secret', 'is', null).then(0).else(1).end().as('totp'))
      .orderBy('id')
      .execute(),
    db.selectFrom('staff_permissions').select(['staff_id', 'permission', 'effect']).orderBy('permission').execute(),
    db
      .selectFrom('staff_tokens')
      .select(['staff_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .groupBy('staff_id')
      .execute(),
  ]);
  return { staff, permissions, tokens };
}

/** The owner of a live token, or undefined. */
export async function liveTokenOwner(db: Kysely<GatewayDB>, tokenId: number): Promise<number | undefined> {
  const now = nowSeconds();
  const row = await db
    .selectFrom('staff_tokens')
    .select('staff_id')
    .where('id', '=', tokenId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row ? Number(row.staff_id) : undefined;
}

export async function clearPermission(db: Kysely<GatewayDB>, staffId: number, permission: string): Promise<boolean> {
  const r = await db.deleteFrom('staff_permissions').where('staff_id', '=', staffId).where('permission', '=', permission).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
