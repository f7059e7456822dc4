import { AppError } from '../../kit/http/errors.js';

/** SPEC's verification scope names and the reference's dotted names used on the wire. */
export const SCOPES = {
  AccountBind: 'account.binding.bind',
  AccountUnbind: 'account.binding.unbind',
  TwoFASetup: '2fa.setup',
  TwoFADisable: '2fa.disable',
  TwoFABackupCodes: '2fa.backup_codes.regenerate',
  PasskeyRegister: 'passkey.register',
  PasskeyDelete: 'passkey.delete',
} as const;

export type WireScope = (typeof SCOPES)[keyof typeof SCOPES];
const WIRE = new Set<string>(Object.values(SCOPES));

/** The wire scope for a SPEC or wire name; SECURITY_PROOF_SCOPE_MISMATCH for anything else. */
export function wireScope(name: string | undefined): WireScope {
  const s = (name ?? '').trim();
  if (WIRE.has(s)) return s as WireScope;
  if (s in SCOPES) return SCOPES[s as keyof typeof SCOPES];
  throw new AppError('SECURITY_PROOF_SCOPE_MISMATCH');
}

/** Scopes that a user without any second factor may pass with the password (or OAuth) instead. */
export const FALLBACK_SCOPES = new Set<WireScope>([
  '2fa.setup',
  'passkey.register',
  'account.binding.bind',
  'account.binding.unbind',
]);

/**
 * Scopes that add a factor: within SECURITY_RECENT_LOGIN_SECONDS of its sign-in a session passes them without
 * a proof while the user lacks that kind of factor (GitHub's "sudo mode"; new-api's dashboard asks no proof).
 * Never a scope that removes a factor or a binding.
 */
export const RECENT_LOGIN_SCOPES = new Set<WireScope>(['2fa.setup', 'passkey.register']);

/** Scopes whose proof may be the TOTP code sent with the request itself (new-api's dashboard sends `{code}`). */
export const CODE_PROOF_SCOPES = new Set<WireScope>(['2fa.disable', '2fa.backup_codes.regenerate']);

/** Scopes that only make sense while TOTP is enrolled. */
export const NEEDS_TOTP = new Set<WireScope>(['2fa.disable', '2fa.backup_codes.regenerate']);

/**
 * The normalised action context a proof is bound to (the reference's shapes): binding.bind
 * {provider[, email | code]}, binding.unbind {provider_id}, every other scope {}. Throws 400
 * SECURITY_CONTEXT_INVALID for any other shape.
 */
export function normaliseContext(scope: WireScope, input: unknown): Record<string, string> {
  const value = input === undefined || input === null ? {} : input;
  if (typeof value !== 'object' || Array.isArray(value)) throw new AppError('SECURITY_CONTEXT_INVALID');
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  const text = (v: unknown, max: number) => {
    if ((typeof v !== 'string' && typeof v !== 'number') || String(v).trim() === '' || String(v).length > max) {
      throw new AppError('SECURITY_CONTEXT_INVALID');
    }
    return String(v).trim();
  };
  if (scope === 'account.binding.bind') {
    const provider = text(o.provider, 64).toLowerCase();
    const extra = provider === 'email' ? 'email' : provider === 'wechat' || provider === 'social' ? 'code' : null;
    const allowed = extra ? ['provider', extra] : ['provider'];
    if (keys.some((k) => !allowed.includes(k))) throw new AppError('SECURITY_CONTEXT_INVALID');
    const out: Record<string, string> = { provider };
    if (extra && o[extra] !== undefined) out[extra] = extra === 'email' ? text(o[extra], 254).toLowerCase() : text(o[extra], 128);
    return out;
  }
  if (scope === 'account.binding.unbind') {
    if (keys.length !== 1 || keys[0] !== 'provider_id') throw new AppError('SECURITY_CONTEXT_INVALID');
    return { provider_id: text(o.provider_id, 128) };
  }
  if (keys.length !== 0) throw new AppError('SECURITY_CONTEXT_INVALID');
  return {};
}

/** Canonical JSON (sorted keys) of a normalised context. */
export function canonicalContext(context: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(context).sort(([a], [b]) => a.localeCompare(b))));
}
