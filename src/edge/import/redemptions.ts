import { CODE_STATUS } from '../../contract/customer.js';
import { skip, type TableStep } from '../../kit/db/batch-import.js';
import { int, text } from '../../kit/db/source.js';
import { maskedKey } from '../keys/credentials.js';
import { deletedIn, redemptionFields, redemptionProblem, sha256Hex, type SourceRow } from './fields.js';
import { insertRedemption, redemptionByHash, redemptionById, updateUnusedRedemption } from './store.js';
import type { UserLookup } from './wallets.js';

/**
 * new-api `redemptions` → edge_redemptions: the unused codes (enabled, not deleted), each kept as the SHA-256
 * of the code and its mask. Used codes stay behind (their quota is in the user's imported balance). A code
 * used, disabled or deleted in new-api after an earlier run is disabled here, unless it was redeemed here
 * meanwhile; while unused here, its name, quota and expiry follow new-api's.
 */
export function redemptionsStep(rows: SourceRow[], userIdOf: UserLookup): TableStep<SourceRow> {
  const codeOf = (s: SourceRow) => text(s.key).trim();
  return {
    table: 'redemptions',
    rows,
    id: (s) => String(s.id),
    fields: (s) => ({ ...redemptionFields(s), code: codeOf(s), usable: redemptionProblem(s) === null }),
    async insert(trx, s) {
      const problem = redemptionProblem(s);
      if (problem) return skip(problem);
      const code = codeOf(s);
      const hash = sha256Hex(code);
      if (await redemptionByHash(trx, hash)) return skip('the code is on the edge already');
      const creator = userIdOf(String(int(s.user_id)));
      return insertRedemption(trx, {
        ...redemptionFields(s),
        key_hash: hash,
        key_hint: maskedKey(code),
        status: CODE_STATUS.enabled,
        redeemed_time: 0,
        used_owner_id: 0,
        created_by: creator === undefined ? 'system:import' : `account:${creator}`,
        deleted_at: null,
      });
    },
    async update(trx, localId, s, changed) {
      const stored = await redemptionById(trx, localId);
      if (!stored || stored.deleted_at !== null) return skip('the code imported earlier was deleted here');
      if (Number(stored.status) !== CODE_STATUS.enabled) return skip('the code was redeemed or disabled here: left as it is');
      if (redemptionProblem(s) !== null) {
        await updateUnusedRedemption(trx, localId, { status: CODE_STATUS.disabled });
        return;
      }
      if (changed.includes('code')) return skip('its code changed in new-api since the first import: left as it is');
      const f = redemptionFields(s) as Record<string, unknown>;
      const patch: Record<string, unknown> = {};
      for (const k of changed) if (k in f) patch[k] = f[k];
      if (Object.keys(patch).length && !(await updateUnusedRedemption(trx, localId, patch))) return skip('the code was redeemed here meanwhile: left as it is');
    },
  };
}
