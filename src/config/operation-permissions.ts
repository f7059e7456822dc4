import { operations } from '../contract/operations.js';

type Env = Record<string, string | undefined>;

/** The operations whose permission the operator may choose: gateway admin operations SPEC gives none. */
export const OPERATOR_SCOPED_OPERATIONS = operations.filter((o) => o.operatorPermission !== undefined).map((o) => o.id);

/**
 * GATEWAY_OPERATION_PERMISSIONS: `ID=authz.Permission` pairs (comma list) replacing the registry's
 * operatorPermission of those operations; `ID=none` leaves one to any staff identity (SPEC's plain admin).
 * Answers the overrides (null = none), or throws `fail(message)` on a bad entry.
 */
export function operationPermissionOverrides(env: Env, known: readonly string[], fail: (message: string) => Error): Record<string, string | null> {
  const name = 'GATEWAY_OPERATION_PERMISSIONS';
  const overrides: Record<string, string | null> = {};
  const entries = (env.GATEWAY_OPERATION_PERMISSIONS ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    const [, id = '', permission = ''] = /^(\w+)\s*=\s*([\w.]+)$/.exec(entry) ?? [];
    if (!OPERATOR_SCOPED_OPERATIONS.includes(id)) {
      throw fail(`${name}: "${entry}" must start with one of ${OPERATOR_SCOPED_OPERATIONS.join(', ')} and "="`);
    }
    if (permission !== 'none' && !known.includes(permission)) {
      throw fail(`${name}: unknown permission "${permission}" for ${id} (known: ${known.join(', ')}, or "none")`);
    }
    overrides[id] = permission === 'none' ? null : permission;
  }
  return overrides;
}
