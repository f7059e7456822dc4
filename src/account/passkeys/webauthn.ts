import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AppError } from '../../kit/http/errors.js';
import type { Config } from '../../config/index.js';
import type { PasskeyRow } from './store.js';

/** Ceremony timeout given to the browser (the flow itself lives 5 minutes). */
const TIMEOUT_MS = 120_000;

type PasskeyConfig = Config['passkey'];

export function userHandleOf(userId: number): string {
  return Buffer.from(String(userId)).toString('base64url');
}

/** The RP id a ceremony runs under: the configured one; a different hint is refused. */
export function rpIdFor(cfg: PasskeyConfig, hint: string | undefined): string {
  if (!cfg.enabled) throw new AppError('PASSKEY_DISABLED');
  if (hint && hint.trim().toLowerCase() !== cfg.rpId) throw new AppError('PASSKEY_RP_ID_INVALID');
  return cfg.rpId;
}

export function registrationOptions(cfg: PasskeyConfig, user: { id: number; username: string; display_name: string }, existing?: PasskeyRow) {
  return generateRegistrationOptions({
    rpName: cfg.rpName,
    rpID: cfg.rpId,
    userName: user.username,
    userDisplayName: user.display_name || user.username,
    userID: new Uint8Array(Buffer.from(String(user.id))),
    timeout: TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing ? [{ id: existing.credential_id }] : [],
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

export function assertionOptions(cfg: PasskeyConfig, credential?: PasskeyRow) {
  return generateAuthenticationOptions({
    rpID: cfg.rpId,
    timeout: TIMEOUT_MS,
    userVerification: 'required',
    allowCredentials: credential ? [{ id: credential.credential_id, transports: splitTransports(credential.transports) }] : [],
  });
}

/**
 * A ceremony's options as sent: the browser's JSON options, and beside them the same under `publicKey`
 * (go-webauthn's wrapper, which new-api's dashboard reads as `options.publicKey`).
 */
export function withPublicKey<T extends object>(options: T): T & { publicKey: T } {
  return { ...options, publicKey: options };
}

function splitTransports(t: string): any[] {
  return t ? t.split(',') : [];
}

/** Verifies an attestation (user verification required); PASSKEY_VERIFICATION_FAILED on any problem. */
export async function checkRegistration(cfg: PasskeyConfig, response: unknown, challenge: string) {
  try {
    const r = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: cfg.origins,
      expectedRPID: cfg.rpId,
      requireUserVerification: true,
    });
    if (!r.verified || !r.registrationInfo) throw new Error('not verified');
    const c = r.registrationInfo.credential;
    return { id: c.id, publicKey: Buffer.from(c.publicKey).toString('base64url'), counter: c.counter, transports: (c.transports ?? []).join(',') };
  } catch {
    throw new AppError('PASSKEY_VERIFICATION_FAILED');
  }
}

/** Verifies an assertion against the stored credential; returns the new signature counter. */
export async function checkAssertion(cfg: PasskeyConfig, response: unknown, challenge: string, credential: PasskeyRow) {
  try {
    const r = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: cfg.origins,
      expectedRPID: credential.rp_id,
      requireUserVerification: true,
      credential: {
        id: credential.credential_id,
        publicKey: new Uint8Array(Buffer.from(credential.public_key, 'base64url')),
        counter: Number(credential.counter),
        transports: splitTransports(credential.transports),
      },
    });
    if (!r.verified || !r.authenticationInfo.userVerified) throw new Error('not verified');
    return r.authenticationInfo.newCounter;
  } catch {
    throw new AppError('PASSKEY_VERIFICATION_FAILED');
  }
}

/** The credential id a client response names (its `id`), or null when the shape is wrong. */
export function credentialIdOf(response: unknown): string | null {
  const id = (response as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 && id.length <= 1024 ? id : null;
}

export function userHandleIn(response: unknown): string | null {
  const h = (response as { response?: { userHandle?: unknown } } | null)?.response?.userHandle;
  return typeof h === 'string' ? h : null;
}
