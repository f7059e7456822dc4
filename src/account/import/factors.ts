import { Secret } from 'otpauth';
import { Skip, skip, type TableStep } from '../../kit/db/batch-import.js';
import { importMap } from '../../kit/db/import-map.js';
import { int, text, truthy, unixSeconds } from '../../kit/db/source.js';
import { nowSeconds } from '../db.js';
import { TOTP_PERIOD } from '../two-factor/totp.js';
import type { SourceRow } from './users.js';

const deleted = (s: SourceRow) => s.deleted_at !== null && s.deleted_at !== undefined;

async function localUser(trx: any, source: string, s: SourceRow): Promise<number | Skip> {
  const m = await importMap.get(trx, source, 'users', String(s.user_id));
  return m ? m.localId : skip('its user was not imported');
}

/** The reference's TOTP secret (base32 text) when it decodes to at least 80 bits, else null. */
export function totpSecret(v: unknown): string | null {
  const b32 = text(v).replace(/\s+/g, '').toUpperCase().replace(/=+$/, '');
  if (!/^[A-Z2-7]{16,}$/.test(b32)) return null;
  try {
    return Secret.fromBase32(b32).bytes.length >= 10 ? b32 : null;
  } catch {
    return null;
  }
}

/** new-api `two_fas` → two_factor, the secret sealed as enrolment seals it; unfinished setups stay behind. */
export function twoFactorStep(rows: SourceRow[], source: string, seal: (userId: number, b32: string) => string): TableStep<SourceRow> {
  return {
    table: 'two_fas',
    rows,
    id: (s) => String(s.id),
    precheck(s) {
      if (deleted(s)) return 'deleted in the source';
      if (!truthy(s.is_enabled)) return 'setup not finished in the source';
      return totpSecret(s.secret) ? null : 'undecodable 2FA secret';
    },
    fields: (s) => ({ user: String(s.user_id), secret: totpSecret(s.secret) }),
    async insert(trx, s) {
      const userId = await localUser(trx, source, s);
      if (userId instanceof Skip) return userId;
      if (await trx.selectFrom('two_factor').select('user_id').where('user_id', '=', userId).executeTakeFirst()) return skip('the local user already has 2FA');
      // A code accepted by the reference just before the move is not accepted again here.
      const used = unixSeconds(s.last_used_at);
      await trx
        .insertInto('two_factor')
        .values({
          user_id: userId,
          secret_sealed: seal(userId, totpSecret(s.secret)!),
          failed_attempts: 0,
          locked_until: 0,
          last_step: used ? Math.floor(used / TOTP_PERIOD) : 0,
          created_at: unixSeconds(s.created_at) ?? nowSeconds(),
        })
        .execute();
      return userId;
    },
    async update(trx, localId, s) {
      await trx.updateTable('two_factor').set({ secret_sealed: seal(localId, totpSecret(s.secret)!), failed_attempts: 0, locked_until: 0 }).where('user_id', '=', localId).execute();
    },
  };
}

const BCRYPT = /^\$2[aby]\$\d\d\$.{53}$/;

/** new-api `two_fa_backup_codes` (bcrypt of XXXX-XXXX) → two_factor_backup_codes, kept as bcrypt (two-factor/service.ts checks them). */
export function backupCodesStep(rows: SourceRow[], source: string): TableStep<SourceRow> {
  return {
    table: 'two_fa_backup_codes',
    rows,
    id: (s) => String(s.id),
    precheck(s) {
      if (deleted(s)) return 'deleted in the source';
      if (truthy(s.is_used)) return 'used in the source';
      return BCRYPT.test(text(s.code_hash)) ? null : 'unsupported backup code hash';
    },
    fields: (s) => ({ user: String(s.user_id), hash: text(s.code_hash) }),
    async insert(trx, s) {
      const userId = await localUser(trx, source, s);
      if (userId instanceof Skip) return userId;
      if (!(await trx.selectFrom('two_factor').select('user_id').where('user_id', '=', userId).executeTakeFirst())) return skip("its user's 2FA was not imported");
      await trx.insertInto('two_factor_backup_codes').values({ code_hash: text(s.code_hash), user_id: userId, used_at: null, created_at: unixSeconds(s.created_at) ?? nowSeconds() }).execute();
      return userId;
    },
    async update() {
      return skip('changed in the source after it was imported: not re-imported');
    },
  };
}

const b64url = (v: unknown) => Buffer.from(text(v), 'base64').toString('base64url');

/** A JSON array of transports (the reference) as our comma list. */
function transports(v: unknown): string {
  try {
    const list = JSON.parse(text(v) || '[]');
    return Array.isArray(list) ? list.filter((t) => typeof t === 'string' && /^[a-z-]{1,32}$/.test(t)).join(',') : '';
  } catch {
    return '';
  }
}

/** The passkey row kept per user: the most recently used (else created) one; here a user has one passkey. */
export function keptPasskeys(rows: SourceRow[]): Set<unknown> {
  const best = new Map<string, SourceRow>();
  const when = (s: SourceRow) => unixSeconds(s.last_used_at) ?? unixSeconds(s.created_at) ?? 0;
  for (const s of rows) {
    if (deleted(s)) continue;
    const cur = best.get(String(s.user_id));
    if (!cur || when(s) > when(cur) || (when(s) === when(cur) && int(s.id) > int(cur.id))) best.set(String(s.user_id), s);
  }
  return new Set([...best.values()].map((s) => s.id));
}

/**
 * new-api `passkey_credentials` (standard base64 id and key, JSON transports) → passkey_credentials
 * (base64url, comma list), bound to this server's PASSKEY_RP_ID.
 */
export function passkeysStep(rows: SourceRow[], source: string, rpId: string): TableStep<SourceRow> {
  const kept = keptPasskeys(rows);
  return {
    table: 'passkey_credentials',
    rows,
    id: (s) => String(s.id),
    precheck(s) {
      if (deleted(s)) return 'deleted in the source';
      if (!kept.has(s.id)) return 'one passkey per user here: a more recently used one of this user was kept';
      if (!rpId) return 'PASSKEY_RP_ID is not set here';
      if (!b64url(s.credential_id) || !b64url(s.public_key)) return 'undecodable credential';
      return null;
    },
    fields: (s) => ({ user: String(s.user_id), id: b64url(s.credential_id), key: b64url(s.public_key), counter: int(s.sign_count), transports: transports(s.transports) }),
    async insert(trx, s) {
      const userId = await localUser(trx, source, s);
      if (userId instanceof Skip) return userId;
      if (await trx.selectFrom('passkey_credentials').select('user_id').where('user_id', '=', userId).executeTakeFirst()) return skip('the local user already has a passkey');
      const credentialId = b64url(s.credential_id);
      if (await trx.selectFrom('passkey_credentials').select('user_id').where('credential_id', '=', credentialId).executeTakeFirst()) return skip('credential already registered here');
      await trx
        .insertInto('passkey_credentials')
        .values({
          user_id: userId,
          credential_id: credentialId,
          public_key: b64url(s.public_key),
          counter: int(s.sign_count),
          rp_id: rpId,
          transports: transports(s.transports),
          // new-api's user handle is its user id in decimal: the authenticator keeps answering with it.
          user_handle: Buffer.from(String(int(s.user_id))).toString('base64url'),
          created_at: unixSeconds(s.created_at) ?? nowSeconds(),
          last_used_at: unixSeconds(s.last_used_at),
        })
        .execute();
      return userId;
    },
    async update(trx, localId, s) {
      const row = await trx.selectFrom('passkey_credentials').select(['counter', 'credential_id']).where('user_id', '=', localId).executeTakeFirst();
      if (!row || row.credential_id !== b64url(s.credential_id)) return skip('the passkey imported earlier was replaced here');
      // The signature counter only moves forward.
      await trx
        .updateTable('passkey_credentials')
        .set({ public_key: b64url(s.public_key), counter: Math.max(Number(row.counter), int(s.sign_count)), transports: transports(s.transports) })
        .where('user_id', '=', localId)
        .execute();
    },
  };
}
