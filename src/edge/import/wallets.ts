import { skip, type TableStep } from '../../kit/db/batch-import.js';
import { int } from '../../kit/db/source.js';
import { ensureCustomerOwner } from '../customers/owners.js';
import { credit } from '../wallets/store.js';
import { deletedIn, type SourceRow } from './fields.js';
import { addWalletUsage, balanceJson, creditExists, insertCreditRow } from './store.js';

/** The account user id a new-api user became (the account import's map), or undefined. */
export type UserLookup = (newApiUserId: string) => number | undefined;

/** The credit that brought a new-api user's quota over: one per user, so no run credits it twice. */
export const userCreditId = (newApiUserId: string) => `import:user:${newApiUserId}`;

/**
 * new-api `users` → the wallet of the account user each became (owner `account-<id>`): the quota (new-api's
 * available balance, same units) credited once as an `import` credit, and used_quota and request_count added
 * to the wallet's counters. The wallet is the edge's from then on: a later change of these in new-api is
 * reported and not applied (the customer may have spent on the edge meanwhile).
 */
export function walletsStep(rows: SourceRow[], userIdOf: UserLookup): TableStep<SourceRow> {
  return {
    table: 'wallets',
    rows,
    id: (s) => String(s.id),
    precheck: (s) => (deletedIn(s) ? 'deleted in the source' : userIdOf(String(s.id)) === undefined ? 'its user was not imported' : null),
    fields: (s) => ({ user: userIdOf(String(s.id)), quota: int(s.quota), used_quota: int(s.used_quota), request_count: int(s.request_count) }),
    async insert(trx, s) {
      const quota = int(s.quota);
      if (quota < 0) return skip(`quota below zero in new-api (${quota}): nothing was imported; credit the wallet by hand if needed`);
      const creditId = userCreditId(String(s.id));
      if (await creditExists(trx, creditId)) return skip('its quota was credited by an earlier import');
      const ownerId = await ensureCustomerOwner(trx, userIdOf(String(s.id))!);
      await credit(trx, ownerId, quota);
      await addWalletUsage(trx, ownerId, Math.max(0, int(s.used_quota)), Math.max(0, int(s.request_count)));
      if (quota > 0) {
        await insertCreditRow(trx, { credit_id: creditId, owner_id: ownerId, amount: quota, wallet: await balanceJson(trx, ownerId), created_at: Math.floor(Date.now() / 1000), kind: 'import', reason: 'balance imported from new-api' });
      }
      return ownerId;
    },
    async update(_trx, _ownerId, _s, changed) {
      return skip(`${changed.join(', ')} changed in new-api since the first import: the edge's wallet was left as it is`);
    },
  };
}
