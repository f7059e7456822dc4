import crypto from 'node:crypto';
import { open, seal } from '../../kit/crypto/aead.js';
import { deriveKey } from '../../kit/crypto/tokens.js';
import { AppError } from '../../kit/http/errors.js';
import type { AccountContext } from '../context.js';
import { nowSeconds } from '../db.js';

const OPTION_KEY = 'password_encryption_key';
const MAX_CIPHERTEXT = 4096;

/** A password as a client sends it: plain, or encrypted with the key of A27. */
export interface PasswordInput {
  password?: string;
  password_encrypted?: string;
  encryption_key_id?: string;
}

export interface EncryptionKey {
  kid: string;
  publicKeyPem: string;
  privateKey: crypto.KeyObject;
}

function describe(privateKey: crypto.KeyObject): EncryptionKey {
  const publicKey = crypto.createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    kid: crypto.createHash('sha256').update(der).digest().subarray(0, 16).toString('hex'),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKey,
  };
}

/**
 * The RSA-2048 key clients use to encrypt the login password (A27). The private key is kept in the
 * database sealed with a key derived from the session secret, so every instance and restart shares it.
 */
export function createPasswordEncryption(ctx: AccountContext) {
  const { db } = ctx.database;
  const sealKey = deriveKey(ctx.secret, 'password-encryption-key');
  let current: Promise<EncryptionKey> | undefined;

  async function loadOrCreate(): Promise<EncryptionKey> {
    const row = await db.selectFrom('account_options').select('value').where('key', '=', OPTION_KEY).executeTakeFirst();
    if (row) {
      try {
        return describe(crypto.createPrivateKey(open(sealKey, row.value, OPTION_KEY)));
      } catch {
        ctx.log.warn('password encryption key cannot be opened with the current SESSION_SECRET; generating a new one');
        await db.deleteFrom('account_options').where('key', '=', OPTION_KEY).execute();
      }
    }
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const inserted = await db
      .insertInto('account_options')
      .values({ key: OPTION_KEY, value: seal(sealKey, pem, OPTION_KEY), updated_at: nowSeconds() })
      .onConflict((oc) => oc.column('key').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return loadOrCreate(); // another instance won
    return describe(privateKey);
  }

  function key(): Promise<EncryptionKey> {
    current ??= loadOrCreate().catch((e) => {
      current = undefined;
      throw e;
    });
    return current;
  }

  /** Decrypts a client-encrypted password; null for any failure (one error for all causes). */
  async function decrypt(ciphertext: string, kid: string): Promise<string | null> {
    const k = await key();
    if (kid !== k.kid || ciphertext.length > MAX_CIPHERTEXT) return null;
    try {
      if (ciphertext.startsWith('v2.')) {
        const [, wrapped, iv, ct] = ciphertext.split('.');
        if (!wrapped || !iv || !ct) return null;
        const aesKey = crypto.privateDecrypt(
          { key: k.privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: Buffer.from('password-v2') },
          Buffer.from(wrapped, 'base64'),
        );
        const ivBuf = Buffer.from(iv, 'base64');
        const body = Buffer.from(ct, 'base64');
        if (aesKey.length !== 32 || ivBuf.length !== 12 || body.length < 16) return null;
        const decipher = crypto.createDecipheriv('aes-256-gcm', aesKey, ivBuf);
        decipher.setAAD(Buffer.from(`password-v2:${k.kid}`));
        decipher.setAuthTag(body.subarray(body.length - 16));
        return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
      }
      const raw = Buffer.from(ciphertext, 'base64');
      if (raw.length !== 256) return null;
      return crypto
        .privateDecrypt({ key: k.privateKey, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, raw)
        .toString('utf8');
    } catch {
      return null;
    }
  }

  /** Returns the plain password from the request, decrypting it when encryption is on; null if unusable. */
  async function passwordFrom(input: PasswordInput): Promise<string | null> {
    if (!ctx.config.passwordLoginEncryptionEnabled) return input.password || null;
    if (!input.password_encrypted || !input.encryption_key_id) {
      throw new AppError('LOGIN_INVALID_PARAMETERS');
    }
    return decrypt(input.password_encrypted, input.encryption_key_id);
  }

  return { key, decrypt, passwordFrom };
}

export type PasswordEncryption = ReturnType<typeof createPasswordEncryption>;
