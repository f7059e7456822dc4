import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 parameters of the reference: SHA-1, 6 digits, 30-second steps, ±1 step accepted. */
export const TOTP_PERIOD = 30;
export const TOTP_DIGITS = 6;
const WINDOW = 1;
const BACKUP_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpUri(secretBase32: string, issuer: string, account: string): string {
  return new TOTP({ issuer, label: account, secret: Secret.fromBase32(secretBase32), algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD }).toString();
}

export function totpCode(secretBase32: string, timestampMs: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secretBase32), algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD, timestamp: timestampMs });
}

/** The time step a 6-digit code belongs to (within ±1 step of now), or null when it matches none. */
export function matchTotpStep(secretBase32: string, code: string, nowMs = Date.now()): number | null {
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD,
    timestamp: nowMs,
    window: WINDOW,
  });
  return delta === null ? null : Math.floor(nowMs / 1000 / TOTP_PERIOD) + delta;
}

/** What a submitted code looks like: a TOTP code, a backup code (normalised to XXXXXXXX), or neither. */
export function classifyCode(input: string): { kind: 'totp' | 'backup' | 'other'; value: string } {
  const v = input.replace(/\s+/g, '');
  if (/^\d{6}$/.test(v)) return { kind: 'totp', value: v };
  const b = v.replace(/-/g, '').toUpperCase();
  if (/^[A-Z0-9]{8}$/.test(b)) return { kind: 'backup', value: b };
  return { kind: 'other', value: '' };
}

/** Backup codes `XXXX-XXXX` from A–Z0–9. */
export function newBackupCodes(count: number): string[] {
  return Array.from({ length: count }, () => {
    let s = '';
    for (let i = 0; i < 8; i++) s += BACKUP_ALPHABET[crypto.randomInt(BACKUP_ALPHABET.length)];
    return `${s.slice(0, 4)}-${s.slice(4)}`;
  });
}
