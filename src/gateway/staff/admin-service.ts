import QRCode from 'qrcode';
import { AppError } from '../../kit/http/errors.js';
import type { GatewayContext } from '../context.js';
import { audit, searchAudit, type AuditFilter } from '../audit/store.js';
import { clearPermission, liveTokenOwner, nameTaken, staffById, staffOverview } from './admin-store.js';
import { STAFF_SECRET_SCOPE, type ProofService } from './proofs.js';
import { effectivePermissions, isPermission, type Role, type StaffIdentity, type StaffService } from './service.js';

export const STAFF_NAME_PATTERN = '^[A-Za-z0-9._@-]{1,64}$';

export interface CreateRequest {
  name: string;
  kind: 'staff' | 'service';
  role?: 'root' | 'admin';
  permissions?: string[];
}

/**
 * The staff administration of the console (GS06–GS15): what the staff, token, service and audit CLI commands
 * do, for a root caller (`me`), with three refusals the CLI does not need (a root never disables itself,
 * changes its own permissions or revokes its own last token) and a step-up proof (scope StaffSecret) before
 * any secret is answered. Every write is audited with the caller as actor, never with a secret.
 */
export class StaffAdminService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly staff: StaffService,
    private readonly proofs: ProofService,
  ) {}

  private async target(id: number) {
    const row = await staffById(this.ctx.db, id);
    if (!row) throw new AppError('STAFF_NOT_FOUND');
    return row;
  }

  private record(me: StaffIdentity, operation: string, detail: Record<string, unknown>) {
    return audit(this.ctx.db, { id: me.id, name: me.name }, operation, null, detail);
  }

  /** The step-up before a secret: the caller's TOTP must be enrolled, then its single-use proof is consumed. */
  private async stepUp(me: StaffIdentity, proof: string | undefined) {
    const self = await staffById(this.ctx.db, me.id);
    if (!self?.totp_secret) throw new AppError('STAFF_STEP_UP_NOT_ENROLLED', { params: { name: me.name } });
    await this.proofs.consume(proof, me.id, STAFF_SECRET_SCOPE, 0);
  }

  async list(me: StaffIdentity) {
    const { staff, permissions, tokens } = await staffOverview(this.ctx.db);
    const adminDefaults = this.ctx.config.gateway.adminPermissions;
    const items = staff.map((s) => {
      const rows = permissions.filter((p) => Number(p.staff_id) === Number(s.id));
      const role = s.role as Role;
      return {
        id: Number(s.id),
        name: s.name,
        kind: s.kind,
        role,
        disabled: s.disabled_at !== null,
        disabled_at: s.disabled_at === null ? null : Number(s.disabled_at),
        totp_enrolled: Number(s.totp) === 1,
        granted: rows.filter((r) => r.effect === 'grant').map((r) => r.permission),
        denied: rows.filter((r) => r.effect === 'deny').map((r) => r.permission),
        permissions: [...effectivePermissions(role, adminDefaults, rows)].sort(),
        live_tokens: Number(tokens.find((t) => Number(t.staff_id) === Number(s.id))?.n ?? 0),
        created_at: Number(s.created_at),
      };
    });
    return { items, self_id: me.id, admin_defaults: [...adminDefaults] };
  }

  async create(me: StaffIdentity, req: CreateRequest) {
    const name = req.name.trim();
    if (!new RegExp(STAFF_NAME_PATTERN).test(name)) throw new AppError('STAFF_INVALID', { params: { detail: 'the name must be 1-64 letters, digits, . _ @ -' } });
    const permissions = [...new Set(req.permissions ?? [])];
    for (const p of permissions) if (!isPermission(p)) throw new AppError('STAFF_INVALID', { params: { detail: `unknown permission ${p}` } });
    let role: Role;
    if (req.kind === 'service') role = 'service';
    else if (req.role === 'root' || req.role === 'admin') role = req.role;
    else throw new AppError('STAFF_INVALID', { params: { detail: 'a staff member needs the role root or admin' } });
    if (role === 'root' && permissions.length) throw new AppError('STAFF_ROOT_HAS_ALL');
    if (await nameTaken(this.ctx.db, name)) throw new AppError('STAFF_NAME_TAKEN');
    let id: number;
    try {
      id = await this.staff.create(name, role, permissions);
    } catch (e) {
      // Created meanwhile by another request (the service reports the unique violation in words).
      if (await nameTaken(this.ctx.db, name)) throw new AppError('STAFF_NAME_TAKEN');
      throw e;
    }
    await this.record(me, 'GS07', { name, kind: req.kind, role, id, permissions });
    return (await this.list(me)).items.find((s) => s.id === id)!;
  }

  async setDisabled(me: StaffIdentity, id: number, disabled: boolean) {
    const row = await this.target(id);
    if (disabled && id === me.id) throw new AppError('STAFF_SELF_DISABLE');
    await this.staff.setDisabled(row.name, disabled);
    await this.record(me, 'GS08', { name: row.name, id, disabled });
  }

  async setPermission(me: StaffIdentity, id: number, permission: string, effect: 'grant' | 'deny' | 'clear') {
    const row = await this.target(id);
    if (id === me.id) throw new AppError('STAFF_SELF_PERMISSION');
    if (!isPermission(permission)) throw new AppError('STAFF_INVALID', { params: { detail: `unknown permission ${permission}` } });
    if (row.role === 'root') throw new AppError('STAFF_ROOT_HAS_ALL');
    if (effect === 'clear') await clearPermission(this.ctx.db, id, permission);
    else await this.staff.setPermission(row.name, permission, effect);
    await this.record(me, 'GS09', { name: row.name, id, permission, effect });
  }

  async tokens(id: number) {
    const row = await this.target(id);
    const rows = await this.staff.tokensOf(row.name);
    return rows.map((r) => ({ id: Number(r.id), created_at: Number(r.created_at), expires_at: r.expires_at === null ? null : Number(r.expires_at) }));
  }

  async issueToken(me: StaffIdentity, id: number, ttlSeconds: number | undefined, proof: string | undefined) {
    const row = await this.target(id);
    if (row.disabled_at !== null) throw new AppError('STAFF_DISABLED');
    await this.stepUp(me, proof);
    const issued = await this.staff.issueToken(row.name, ttlSeconds);
    await this.record(me, 'GS11', { name: row.name, id, token_id: issued.id, expires_at: issued.expiresAt });
    return { token_id: issued.id, staff_id: id, token: issued.token, created_at: issued.createdAt, expires_at: issued.expiresAt };
  }

  async revokeToken(me: StaffIdentity, tokenId: number) {
    const owner = await liveTokenOwner(this.ctx.db, tokenId);
    if (owner === undefined) throw new AppError('STAFF_TOKEN_NOT_FOUND');
    if (owner === me.id && (await this.tokens(me.id)).length <= 1) throw new AppError('STAFF_SELF_LAST_TOKEN');
    if (!(await this.staff.revokeTokenById(tokenId))) throw new AppError('STAFF_TOKEN_NOT_FOUND');
    const row = await staffById(this.ctx.db, owner);
    await this.record(me, 'GS12', { name: row?.name ?? null, id: owner, token_id: tokenId });
  }

  async revokeAll(me: StaffIdentity, id: number) {
    const row = await this.target(id);
    if (id === me.id) throw new AppError('STAFF_SELF_LAST_TOKEN');
    const count = await this.staff.revokeTokensOf(row.name);
    await this.record(me, 'GS13', { name: row.name, id, count });
    return { revoked: count };
  }

  async enrollTotp(me: StaffIdentity, id: number, proof: string | undefined) {
    const row = await this.target(id);
    if (row.kind !== 'staff') throw new AppError('STAFF_SERVICE_NO_TOTP');
    if (row.disabled_at !== null) throw new AppError('STAFF_DISABLED');
    await this.stepUp(me, proof);
    const { secret, uri } = await this.staff.enrollTotp(row.name);
    await this.record(me, 'GS14', { name: row.name, id, re_enrolled: row.totp_secret !== null });
    return { staff_id: id, secret, otpauth_uri: uri, qr_code_data: await QRCode.toDataURL(uri) };
  }

  async audit(filter: AuditFilter, page: number, pageSize: number) {
    const { items, total } = await searchAudit(this.ctx.db, filter, page, pageSize);
    return {
      items: items.map((r) => ({
        id: Number(r.id),
        actor_id: Number(r.actor_id),
        actor_name: r.actor_name,
        operation: r.operation,
        channel_id: r.channel_id === null ? null : Number(r.channel_id),
        detail: parseDetail(r.detail),
        created_at: Number(r.created_at),
      })),
      total,
      page,
      page_size: pageSize,
    };
  }
}

function parseDetail(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
