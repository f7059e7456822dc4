import { Type } from '@sinclair/typebox';
import { GATEWAY_PERMISSIONS } from '../../config/gateway.js';
import { STAFF_NAME_PATTERN } from './admin-service.js';

/** Requests and answers of GS06–GS15 (staff administration). Times are unix seconds. */

const Str = Type.String();
const Int = Type.Integer();
const Bool = Type.Boolean();
const MaybeInt = Type.Union([Int, Type.Null()]);
const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
export const Permission = Type.Union(GATEWAY_PERMISSIONS.map((p) => Type.Literal(p)));

export const StaffIdParams = Type.Object({ id: Id });
export const TokenIdParams = Type.Object({ token_id: Id });

export const StaffEntry = Type.Object({
  id: Int,
  name: Str,
  kind: Type.Union([Type.Literal('staff'), Type.Literal('service')]),
  role: Type.Union([Type.Literal('root'), Type.Literal('admin'), Type.Literal('service')]),
  disabled: Bool,
  disabled_at: MaybeInt,
  totp_enrolled: Bool,
  granted: Type.Array(Str),
  denied: Type.Array(Str),
  /** The permissions the identity holds now (role, grants, denials). */
  permissions: Type.Array(Str),
  live_tokens: Int,
  created_at: Int,
});

export const StaffListData = Type.Object({ items: Type.Array(StaffEntry), self_id: Int, admin_defaults: Type.Array(Str) });

export const StaffCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: STAFF_NAME_PATTERN }),
  kind: Type.Union([Type.Literal('staff'), Type.Literal('service')]),
  role: Type.Optional(Type.Union([Type.Literal('root'), Type.Literal('admin')])),
  permissions: Type.Optional(Type.Array(Permission, { maxItems: GATEWAY_PERMISSIONS.length })),
});

export const StaffStatusBody = Type.Object({ disabled: Bool });
export const StaffStatusData = Type.Object({ id: Int, disabled: Bool });

export const StaffPermissionBody = Type.Object({
  permission: Permission,
  effect: Type.Union([Type.Literal('grant'), Type.Literal('deny'), Type.Literal('clear')]),
});

export const StaffToken = Type.Object({ id: Int, created_at: Int, expires_at: MaybeInt });
export const StaffTokenIssueBody = Type.Object({ ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 10 * 365 * 86400 })) });
export const StaffIssuedToken = Type.Object({ token_id: Int, staff_id: Int, token: Str, created_at: Int, expires_at: MaybeInt });
export const StaffRevokedData = Type.Object({ revoked: Int });

export const StaffTotpData = Type.Object({ staff_id: Int, secret: Str, otpauth_uri: Str, qr_code_data: Str });

export const AuditQuery = Type.Object({
  p: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  action: Type.Optional(Type.String({ maxLength: 64 })),
  actor: Type.Optional(Type.String({ maxLength: 64 })),
  channel_id: Type.Optional(Id),
  start_time: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11 })),
  end_time: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11 })),
});

export const AuditEntry = Type.Object({
  id: Int,
  actor_id: Int,
  actor_name: Str,
  operation: Str,
  channel_id: MaybeInt,
  /** Names, counts and field names of the write; never a token, secret or key. */
  detail: Type.Record(Type.String(), Type.Unknown()),
  created_at: Int,
});
export const AuditPage = Type.Object({ items: Type.Array(AuditEntry), total: Int, page: Int, page_size: Int });
