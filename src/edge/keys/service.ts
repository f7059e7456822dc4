import type { EdgeContext } from '../context.js';
import { importedKeyId, isImportedKey, newCredential, parseCredential, secretHash, secretMatches } from './credentials.js';
import { ensureOwner, insertKey, keyWithOwner, listKeys, revokeKey, type Db } from './store.js';
import { tokenIdentityOf, type TokenIdentity } from './token-limits.js';

export interface EdgeIdentity {
  keyId: string;
  ownerId: number;
  owner: string;
  /** The account user's token this key belongs to; null for a CLI key. */
  token: TokenIdentity | null;
  /** The owner's account user is disabled: every key of the owner is refused (edgeAuthenticator). */
  ownerSuspended: boolean;
}

const OWNER = /^[A-Za-z0-9._-]{1,64}$/;

export function checkOwnerName(name: string) {
  if (!OWNER.test(name)) throw new Error('--owner must be 1 to 64 letters, digits, dots, dashes or underscores');
}

/** Developer keys: issued and revoked by the CLI, checked on every /v1 request. */
export class KeyService {
  constructor(private readonly ctx: EdgeContext) {}

  /** Issues a key; the returned token is shown once and never stored. */
  async issue(owner: string, db: Db = this.ctx.db) {
    checkOwnerName(owner);
    const ownerId = await ensureOwner(db, owner);
    const c = newCredential();
    await insertKey(db, { key_id: c.keyId, owner_id: ownerId, secret_hash: secretHash(c.secret).toString('hex') });
    return { keyId: c.keyId, owner, token: c.token };
  }

  async revoke(keyId: string, db: Db = this.ctx.db): Promise<boolean> {
    return revokeKey(db, keyId);
  }

  list(owner?: string) {
    return listKeys(this.ctx.db, owner);
  }

  /**
   * The identity of a well-formed, known, unrevoked key whose secret matches; null otherwise. A developer key
   * (svc_sk_<keyId>.<secret>) is checked against the hash of its secret; an imported new-api key (sk-…), which
   * has no key id of its own, is found by its derived id and checked against the hash of the whole key.
   */
  async authenticate(token: string): Promise<EdgeIdentity | null> {
    const parsed = parseCredential(token) ?? (isImportedKey(token) ? { keyId: importedKeyId(token), secret: token } : null);
    if (!parsed) return null;
    const row = await keyWithOwner(this.ctx.db, parsed.keyId);
    // The comparison runs for unknown keys too (against zeros), so timing does not tell them apart.
    const ok = secretMatches(parsed.secret, row?.secret_hash ?? null);
    if (!ok || !row || row.revoked_at !== null || row.token_deleted_at !== null) return null;
    return { keyId: row.key_id, ownerId: Number(row.owner_id), owner: row.owner, token: tokenIdentityOf(row), ownerSuspended: row.owner_suspended_at !== null };
  }
}
