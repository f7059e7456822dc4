import { skip, type TableStep } from '../../kit/db/batch-import.js';
import { int } from '../../kit/db/source.js';
import { nowSeconds, type EdgeTokenTable } from '../db.js';
import { importedKeyId, isImportedKey, maskedKey } from '../keys/credentials.js';
import { ensureCustomerOwner } from '../customers/owners.js';
import { insertKey, revokeKey } from '../keys/store.js';
import { customerKeyOf, deletedIn, sha256Hex, tokenFields, tokenProblem, type SourceRow } from './fields.js';
import { insertToken, keyExists, tokenById, updateToken } from './store.js';
import type { UserLookup } from './wallets.js';

/**
 * new-api `tokens` → edge_tokens, each on a developer key of its own in edge_keys. The customer's `sk-…`
 * key keeps working unchanged: its key id is derived from it (importedKeyId) and only the SHA-256 of the
 * whole key is stored, with the mask every read shows; it is never shown again (no pending key).
 * Soft-deleted tokens stay behind; one deleted in new-api after an earlier run is deleted here (its key
 * revoked), and a key changed there replaces the old one here.
 */
export function tokensStep(rows: SourceRow[], userIdOf: UserLookup): TableStep<SourceRow> {
  const ownerOf = (s: SourceRow) => userIdOf(String(int(s.user_id)));
  return {
    table: 'tokens',
    rows,
    id: (s) => String(s.id),
    precheck(s) {
      if (ownerOf(s) === undefined) return deletedIn(s) ? 'deleted in the source' : 'its user was not imported';
      if (!isImportedKey(customerKeyOf(s))) return "its key is not new-api's 48 letters or digits, so the edge cannot accept it";
      return tokenProblem(s);
    },
    fields: (s) => ({ ...tokenFields(s), user: ownerOf(s), key: customerKeyOf(s), deleted: deletedIn(s) }),
    async insert(trx, s) {
      if (deletedIn(s)) return skip('deleted in the source');
      const key = customerKeyOf(s);
      const keyId = importedKeyId(key);
      if (await keyExists(trx, keyId)) return skip('its key is on the edge already');
      const ownerId = await ensureCustomerOwner(trx, ownerOf(s)!);
      await insertKey(trx, { key_id: keyId, owner_id: ownerId, secret_hash: sha256Hex(key) });
      const row: Omit<EdgeTokenTable, 'id'> = { ...tokenFields(s), key_id: keyId, owner_id: ownerId, key_hint: maskedKey(key), pending_key: null, pending_until: null, deleted_at: null };
      return insertToken(trx, row);
    },
    async update(trx, localId, s, changed) {
      const stored = await tokenById(trx, localId);
      if (!stored || stored.deleted_at !== null) return skip('the token imported earlier was deleted here');
      if (deletedIn(s)) {
        await revokeKey(trx, stored.key_id);
        await updateToken(trx, localId, { deleted_at: nowSeconds() });
        return;
      }
      if (changed.includes('user')) return skip('its user changed in new-api since the first import: left as it is');
      const fields = tokenFields(s) as Record<string, unknown>;
      const patch: Record<string, unknown> = {};
      for (const f of changed) if (f in fields) patch[f] = fields[f];
      if (changed.includes('key')) {
        const key = customerKeyOf(s);
        const keyId = importedKeyId(key);
        if (await keyExists(trx, keyId)) return skip('its new key is on the edge already');
        await revokeKey(trx, stored.key_id);
        await insertKey(trx, { key_id: keyId, owner_id: Number(stored.owner_id), secret_hash: sha256Hex(key) });
        Object.assign(patch, { key_id: keyId, key_hint: maskedKey(key) });
      }
      if (Object.keys(patch).length) await updateToken(trx, localId, patch);
    },
  };
}
