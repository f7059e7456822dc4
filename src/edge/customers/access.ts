import { CustomerRefusal, customerOwnerName, type CustomerActor, type CustomerPort } from '../../contract/customer.js';
import { transactionWithRetry } from '../../kit/db/index.js';
import { appendAudit } from '../audit/store.js';
import type { EdgeContext } from '../context.js';
import { nowSeconds } from '../db.js';
import { setOwnerSuspended, type Db } from '../keys/store.js';
import { customerOwnerId, ensureCustomerOwner } from './owners.js';

export type AccessMethods = Pick<CustomerPort, 'setUserEnabled'>;

/**
 * Turns an account user's keys off or on in `trx`, audited when it changed; answers whether it did. Enabling
 * a user the edge has never met has nothing to turn on; disabling one records the owner, so a key it gets
 * later (an import) is refused too.
 */
export async function switchUserKeys(trx: Db, userId: number, enabled: boolean, by: CustomerActor): Promise<boolean> {
  const ownerId = enabled ? await customerOwnerId(trx, userId) : await ensureCustomerOwner(trx, userId);
  if (ownerId === undefined || !(await setOwnerSuspended(trx, ownerId, enabled ? null : nowSeconds()))) return false;
  await appendAudit(trx, by, enabled ? 'owner.resume' : 'owner.suspend', { owner: customerOwnerName(userId) });
  return true;
}

/**
 * Whether an account user's keys work at all: one flag on the user's owner (edge_owners.suspended_at), read
 * with the key on every call (keys/store.ts), so a disable stops the next call of every key and leaves each
 * token's own status as its user set it.
 */
export function accessPart(ctx: EdgeContext): AccessMethods {
  return {
    async setUserEnabled(userId: number, enabled: boolean, by: CustomerActor) {
      if (typeof enabled !== 'boolean') throw new CustomerRefusal('invalid', 'enabled must be true or false');
      await transactionWithRetry(ctx.db, (trx) => switchUserKeys(trx, userId, enabled, by));
    },
  };
}
