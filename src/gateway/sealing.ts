import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { persistentSecret, type Config } from '../config/index.js';
import { open } from '../kit/crypto/aead.js';
import { forShare, transactionWithRetry } from '../kit/db/index.js';
import { AppError } from '../kit/http/errors.js';
import { SECRET_KEY_FILE, type GatewayContext } from './context.js';
import type { GatewayDB } from './db.js';

/**
 * The sealing key (AES-256-GCM for channel keys and TOTP secrets) is tied to the gateway database by a
 * fingerprint in gateway_meta: HMAC-SHA256(key, label), which identifies the key without revealing it.
 * A start with another key is refused; a running instance whose key was replaced (gateway-rekey in
 * another process) refuses to write sealed values instead of sealing them with a key nobody has.
 */
const FINGERPRINT = 'sealing_key_fingerprint';

export function keyFingerprint(key: Buffer): string {
  return crypto.createHmac('sha256', key).update('new-api gateway sealing key fingerprint v1').digest('hex');
}

/** Reads and checks the key file; null when it does not exist. The message never shows its content. */
function readKeyFile(file: string): Buffer | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(text.trim())) {
    throw new Error(`the gateway key file ${file} is corrupt: it must hold 64 hex characters (32 bytes); restore it from a backup, or set GATEWAY_SECRET_KEY`);
  }
  return Buffer.from(text.trim(), 'hex');
}

/** The oldest sealed value in the database (a channel key, else a TOTP secret), for databases without a fingerprint. */
async function sealedSample(db: Kysely<GatewayDB>): Promise<{ value: string; aad: string } | null> {
  const channel = await db.selectFrom('channels').select('key').orderBy('id').limit(1).executeTakeFirst();
  if (channel) return { value: channel.key, aad: 'channel.key' };
  const staff = await db.selectFrom('staff').select('totp_secret').where('totp_secret', 'is not', null).orderBy('id').limit(1).executeTakeFirst();
  return staff ? { value: staff.totp_secret!, aad: 'staff.totp' } : null;
}

function opens(key: Buffer, sample: { value: string; aad: string }): boolean {
  try {
    open(key, sample.value, sample.aad);
    return true;
  } catch {
    return false;
  }
}

const readFingerprint = async (db: Kysely<GatewayDB>) =>
  (await db.selectFrom('gateway_meta').select('value').where('key', '=', FINGERPRINT).executeTakeFirst())?.value;

/**
 * The sealing key of this database: GATEWAY_SECRET_KEY, else DATA_DIR/gateway-secret.key (generated only
 * while the database holds nothing sealed). Throws a message naming the key's source, never key material.
 */
export async function loadSealingKey(config: Config, db: Kysely<GatewayDB>): Promise<Buffer> {
  const file = path.join(config.dataDir, SECRET_KEY_FILE);
  const source = config.gateway.secretKey ? 'GATEWAY_SECRET_KEY' : `the key file ${file}`;
  const stored = await readFingerprint(db);
  const sample = stored ? null : await sealedSample(db);
  let key = config.gateway.secretKey ? Buffer.from(config.gateway.secretKey, 'hex') : readKeyFile(file);
  if (!key) {
    if (stored || sample) {
      throw new Error(`the gateway database holds data sealed with a key, but GATEWAY_SECRET_KEY is unset and ${file} does not exist: set DATA_DIR to the directory holding ${SECRET_KEY_FILE} or set GATEWAY_SECRET_KEY (no new key was generated)`);
    }
    persistentSecret(config.dataDir, SECRET_KEY_FILE, 32);
    key = readKeyFile(file)!;
  }
  const mismatch = () => {
    const staged = readStaged(file);
    const hint = staged && keyFingerprint(staged) === stored ? `; ${file}.new matches the database (an interrupted gateway-rekey): move it over ${file}` : '';
    return new Error(`the gateway sealing key from ${source} does not match the key the gateway database was sealed with (fingerprint in gateway_meta); start with the database's current key (after gateway-rekey, the key it printed)${hint}`);
  };
  if (!stored) {
    if (sample && !opens(key, sample)) throw mismatch();
    await db.insertInto('gateway_meta').values({ key: FINGERPRINT, value: keyFingerprint(key) }).onConflict((oc) => oc.column('key').doNothing()).execute();
  }
  if ((stored ?? (await readFingerprint(db))) !== keyFingerprint(key)) throw mismatch();
  return key;
}

function readStaged(file: string): Buffer | null {
  try {
    return readKeyFile(file + '.new');
  } catch {
    return null;
  }
}

/** gateway-rekey: records the new key's fingerprint; call first in the re-encrypting transaction. */
export async function storeFingerprint(trx: Kysely<GatewayDB>, key: Buffer) {
  await trx.updateTable('gateway_meta').set({ value: keyFingerprint(key) }).where('key', '=', FINGERPRINT).execute();
}

/**
 * Call first in every transaction that writes sealed values: refuses (503) when the stored fingerprint is
 * not this instance's key. On PostgreSQL and MySQL the row is held in share mode, so a gateway-rekey (which updates it
 * first) waits for this transaction and then re-encrypts what it wrote.
 */
export async function assertSealingKey(ctx: GatewayContext, trx: Kysely<GatewayDB>) {
  const q = trx.selectFrom('gateway_meta').select('value').where('key', '=', FINGERPRINT);
  const row = await forShare(q, ctx.database.dialect).executeTakeFirst();
  if (row?.value !== keyFingerprint(ctx.secretKey)) throw new AppError('GATEWAY_SEALING_KEY_CHANGED');
}

/**
 * A transaction that writes sealed values, checked by assertSealingKey; run again when chosen as a
 * deadlock victim (a G03 meeting another write of the same rows), so `fn` must only write through `trx`.
 */
export function sealingTransaction<T>(ctx: GatewayContext, fn: (trx: Kysely<GatewayDB>) => Promise<T>): Promise<T> {
  return transactionWithRetry(ctx.db, async (trx) => {
    await assertSealingKey(ctx, trx);
    return fn(trx);
  });
}

/** open() whose authentication failure (a value sealed under another key) answers GATEWAY_SEALING_KEY_CHANGED. */
export function openSealed(key: Buffer, sealed: string, aad: string): string {
  try {
    return open(key, sealed, aad);
  } catch (e) {
    if (/authenticate/.test((e as Error).message)) throw new AppError('GATEWAY_SEALING_KEY_CHANGED');
    throw e;
  }
}
