import type { FastifyRequest } from 'fastify';
import type { OperationSpec } from '../contract/types.js';
import { AppError } from '../kit/http/errors.js';
import { gatewayOf } from './context.js';
import type { StaffService, StaffIdentity } from './staff/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The staff or service identity of the bearer token, set by gatewayAuthenticator. */
    gatewayIdentity?: StaffIdentity;
  }
}

function bearerOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

/** The permission the operator scopes an admin operation by: the registry's, unless overridden (null: none). */
function operatorPermissionOf(spec: OperationSpec, overrides: Record<string, string | null>): string | null {
  if (spec.operatorPermission === undefined) return null;
  return spec.id in overrides ? overrides[spec.id]! : spec.operatorPermission;
}

/**
 * Authenticates a gateway request: the relay's internal API by its workload token (relay/workload.ts), else a
 * staff or service bearer token, then the operation's auth class
 * (root: root staff; admin: any staff identity, or a service identity when the operation names a
 * permission) and its permission; an admin operation without one is staff only, and needs the permission
 * the operator scopes it by, if any (`overrides`: GATEWAY_OPERATION_PERMISSIONS).
 */
export function gatewayAuthenticator(staff: StaffService, workload: (req: FastifyRequest) => Promise<void>, overrides: Record<string, string | null>) {
  return async (req: FastifyRequest, spec: OperationSpec): Promise<void> => {
    if (spec.auth === 'none') return;
    if (spec.auth === 'workload') return workload(req);
    const token = bearerOf(req);
    const identity = token ? await staff.authenticate(token) : null;
    if (!identity) throw new AppError('GW_UNAUTHORIZED');
    req.gatewayIdentity = identity;
    if (spec.auth === 'root') {
      if (identity.role !== 'root') throw new AppError('GW_ROOT_REQUIRED');
      return;
    }
    if (spec.permission) {
      if (!identity.permissions.has(spec.permission)) throw new AppError('GW_FORBIDDEN', { params: { permission: spec.permission } });
      return;
    }
    if (identity.kind !== 'staff') throw new AppError('GW_STAFF_REQUIRED');
    const scoped = operatorPermissionOf(spec, overrides);
    if (scoped && !identity.permissions.has(scoped)) throw new AppError('GW_FORBIDDEN', { params: { permission: scoped } });
  };
}

export function staffOf(req: FastifyRequest): StaffIdentity {
  if (!req.gatewayIdentity) throw new AppError('GW_UNAUTHORIZED');
  return req.gatewayIdentity;
}

/** The step-up proof the caller sent (`X-Security-Proof`, issued by GS01), or undefined when absent or blank. */
export function securityProofOf(req: FastifyRequest): string | undefined {
  const header = req.headers['x-security-proof'];
  return typeof header === 'string' ? header.trim() || undefined : undefined;
}

/** A permission check inside a handler (for example G03's sensitive fields). */
export function requirePermission(req: FastifyRequest, permission: string) {
  if (!staffOf(req).permissions.has(permission)) throw new AppError('GW_FORBIDDEN', { params: { permission } });
}

export { gatewayOf };
