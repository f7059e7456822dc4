import * as OTPAuth from 'otpauth';
import { GATEWAY_PERMISSIONS } from '../../config/gateway.js';
import { seal } from '../../kit/crypto/aead.js';
import { openSealed, sealingTransaction } from '../sealing.js';
import { randomToken, sha256 } from '../../kit/crypto/tokens.js';
import { insertedId, isUniqueViolation } from '../../kit/db/index.js';
import { prepared } from '../../kit/db/prepared.js';
import type { Kysely } from 'kysely';
import type { GatewayDB } from '../db.js';
import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';

export type Role = 'root' | 'admin' | 'service';

/** The authenticated caller of a gateway operation. */
export interface StaffIdentity {
  id: number;
  name: string;
  kind: 'staff' | 'service';
  role: Role;
  permissions: Set<string>;
}

const TOKEN_PREFIX = 'gwst_';
const TOTP_AAD = 'staff.totp';

export function isPermission(p: string): boolean {
  return (GATEWAY_PERMISSIONS as readonly string[]).includes(p);
}

/**
 * Effective permissions: root has all; admin has GATEWAY_ADMIN_PERMISSIONS; a service identity has
 * none by role. Then per-identity grants are added and denials removed (a denial always wins).
 */
export function effectivePermissions(role: Role, adminDefaults: string[], rows: { permission: string; effect: string }[]): Set<string> {
  if (role === 'root') return new Set(GATEWAY_PERMISSIONS);
  const set = new Set(role === 'admin' ? adminDefaults : []);
  for (const r of rows) if (r.effect === 'grant') set.add(r.permission);
  for (const r of rows) if (r.effect === 'deny') set.delete(r.permission);
  return set;
}

// Both run on every authenticated request (see prepared()).
const tokenIdentity = prepared((db: Kysely<GatewayDB>, tokenHash: string) =>
  db
    .selectFrom('staff_tokens')
    .innerJoin('staff', 'staff.id', 'staff_tokens.staff_id')
    .select(['staff.id', 'staff.name', 'staff.kind', 'staff.role', 'staff.disabled_at', 'staff_tokens.expires_at', 'staff_tokens.revoked_at'])
    .where('staff_tokens.token_hash', '=', tokenHash),
);
const permissionRows = prepared((db: Kysely<GatewayDB>, staffId: number) =>
  db.selectFrom('staff_permissions').select(['permission', 'effect']).where('staff_id', '=', staffId),
);

export class StaffService {
  constructor(private readonly ctx: GatewayContext) {}

  async create(name: string, role: Role, permissions: string[] = []): Promise<number> {
    if (!/^[A-Za-z0-9._@-]{1,64}$/.test(name)) throw new Error('name must be 1-64 characters of letters, digits, . _ @ -');
    for (const p of permissions) if (!isPermission(p)) throw new Error(`unknown permission ${p}`);
    try {
      return await this.ctx.db.transaction().execute(async (trx) => {
        const id = await insertedId(
          trx,
          trx.insertInto('staff').values({ name, kind: role === 'service' ? 'service' : 'staff', role, totp_secret: null, totp_last_step: 0, created_at: nowSeconds() } as never),
        );
        for (const permission of permissions) {
          await trx.insertInto('staff_permissions').values({ staff_id: id, permission, effect: 'grant' }).execute();
        }
        return id;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new Error(`an identity named ${name} already exists`);
      throw e;
    }
  }

  async byName(name: string) {
    const row = await this.ctx.db.selectFrom('staff').selectAll().where('name', '=', name).executeTakeFirst();
    if (!row) throw new Error(`no staff or service identity named ${name}`);
    return row;
  }

  /** An identity that may get new tokens and TOTP secrets: it exists and is not disabled. */
  private async enabledByName(name: string) {
    const staff = await this.byName(name);
    if (staff.disabled_at !== null) throw new Error(`${name} is disabled (staff enable --name ${name} first)`);
    return staff;
  }

  /** Grants (or denies) one permission to a named identity, replacing an earlier grant/denial of it. */
  async setPermission(name: string, permission: string, effect: 'grant' | 'deny') {
    if (!isPermission(permission)) throw new Error(`unknown permission ${permission} (known: ${GATEWAY_PERMISSIONS.join(', ')})`);
    const staff = await this.byName(name);
    if (staff.role === 'root') throw new Error(`${name} is root and holds every permission: grant and deny do not apply to it`);
    await this.ctx.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('staff_permissions').where('staff_id', '=', staff.id).where('permission', '=', permission).execute();
      await trx.insertInto('staff_permissions').values({ staff_id: staff.id, permission, effect }).execute();
    });
  }

  /** Issues a bearer token; the token is returned once and only its hash is stored. */
  async issueToken(name: string, ttlSeconds?: number): Promise<{ id: number; token: string; createdAt: number; expiresAt: number | null }> {
    const staff = await this.enabledByName(name);
    const token = TOKEN_PREFIX + randomToken(32);
    const createdAt = nowSeconds();
    const expiresAt = ttlSeconds ? createdAt + ttlSeconds : null;
    const id = await insertedId(
      this.ctx.db,
      this.ctx.db.insertInto('staff_tokens').values({ staff_id: staff.id, token_hash: sha256(token), created_at: createdAt, expires_at: expiresAt, revoked_at: null } as never),
    );
    return { id, token, createdAt, expiresAt };
  }

  async revokeToken(token: string): Promise<boolean> {
    const r = await this.ctx.db
      .updateTable('staff_tokens')
      .set({ revoked_at: nowSeconds() })
      .where('token_hash', '=', sha256(token.trim()))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Revokes one token by its id (from `tokens`); false when no unrevoked token has it. */
  async revokeTokenById(id: number): Promise<boolean> {
    const r = await this.ctx.db.updateTable('staff_tokens').set({ revoked_at: nowSeconds() }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Revokes every token of a named identity; returns how many were still unrevoked. */
  async revokeTokensOf(name: string): Promise<number> {
    const staff = await this.byName(name);
    const r = await this.ctx.db.updateTable('staff_tokens').set({ revoked_at: nowSeconds() }).where('staff_id', '=', staff.id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** The live (unrevoked, unexpired) tokens of a named identity: ids and times, never a token or its hash. */
  async tokensOf(name: string) {
    const staff = await this.byName(name);
    return this.ctx.db
      .selectFrom('staff_tokens')
      .select(['id', 'created_at', 'expires_at'])
      .where('staff_id', '=', staff.id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowSeconds())]))
      .orderBy('id')
      .execute();
  }

  /** Disables (or enables again) an identity: while disabled none of its tokens authenticates. */
  async setDisabled(name: string, disabled: boolean) {
    const staff = await this.byName(name);
    await this.ctx.db.updateTable('staff').set({ disabled_at: disabled ? nowSeconds() : null }).where('id', '=', staff.id).execute();
  }

  async authenticate(token: string): Promise<StaffIdentity | null> {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
    const now = nowSeconds();
    const row = (await tokenIdentity(this.ctx.db, sha256(token))).rows[0];
    if (!row || row.revoked_at !== null || row.disabled_at !== null || (row.expires_at !== null && Number(row.expires_at) <= now)) return null;
    const role = row.role as Role;
    // Root holds every permission whatever its rows say.
    const rows = role === 'root' ? [] : (await permissionRows(this.ctx.db, row.id)).rows;
    return {
      id: Number(row.id),
      name: row.name,
      kind: row.kind,
      role,
      permissions: effectivePermissions(role, this.ctx.config.gateway.adminPermissions, rows),
    };
  }

  /** Enrolls (or re-enrolls) TOTP for a staff member; returns the base32 secret and otpauth URI. */
  async enrollTotp(name: string): Promise<{ secret: string; uri: string }> {
    const staff = await this.enabledByName(name);
    if (staff.kind !== 'staff') throw new Error('service identities cannot enroll a second factor');
    const secret = new OTPAuth.Secret({ size: 20 });
    const totp = new OTPAuth.TOTP({ issuer: 'new-api-gateway', label: staff.name, secret });
    await sealingTransaction(this.ctx, (trx) =>
      trx
        .updateTable('staff')
        .set({ totp_secret: seal(this.ctx.secretKey, secret.base32, TOTP_AAD), totp_last_step: 0 })
        .where('id', '=', staff.id)
        .execute(),
    );
    return { secret: secret.base32, uri: totp.toString() };
  }

  /**
   * Checks a TOTP code (±1 step) and records its step so the same code cannot be used twice; the
   * compare-and-set on totp_last_step makes two concurrent uses of one code accept only one.
   */
  async verifyTotp(staffId: number, code: string): Promise<boolean> {
    const staff = await this.ctx.db.selectFrom('staff').select(['totp_secret', 'totp_last_step']).where('id', '=', staffId).executeTakeFirst();
    if (!staff?.totp_secret) throw new AppError('GW_VERIFY_NOT_ENROLLED');
    if (!/^\d{6}$/.test(code)) return false;
    const secret = openSealed(this.ctx.secretKey, staff.totp_secret, TOTP_AAD);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) });
    const delta = totp.validate({ token: code, window: 1 });
    if (delta === null) return false;
    const step = Math.floor(Date.now() / 1000 / 30) + delta;
    const r = await this.ctx.db
      .updateTable('staff')
      .set({ totp_last_step: step })
      .where('id', '=', staffId)
      .where('totp_last_step', '<', step)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async list() {
    return this.ctx.db.selectFrom('staff').select(['id', 'name', 'kind', 'role', 'created_at', 'disabled_at']).orderBy('id').execute();
  }
}
