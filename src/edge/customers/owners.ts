import { CustomerRefusal, customerOwnerName } from '../../contract/customer.js';
import { ensureOwner, ownerByName, type Db } from '../keys/store.js';
import { ensureWallet, walletOf } from '../wallets/store.js';

/** An account user id as the port takes it: a positive integer an owner name can hold. */
export function checkUserId(userId: number) {
  if (!Number.isSafeInteger(userId) || userId < 1 || userId > 999_999_999_999_999) throw new CustomerRefusal('invalid', 'the user id must be a positive integer');
}

/** The edge owner of an account user, or undefined before the user's first key, credit or adjustment. */
export async function customerOwnerId(db: Db, userId: number): Promise<number | undefined> {
  checkUserId(userId);
  const o = await ownerByName(db, customerOwnerName(userId));
  return o ? Number(o.id) : undefined;
}

/**
 * The edge owner of an account user, created with its wallet (at zero) on first use. Read first: an insert
 * that finds the row (MySQL's INSERT IGNORE) share-locks it, and two such transactions then updating the
 * wallet deadlock; on first use the caller retries (transactionWithRetry).
 */
export async function ensureCustomerOwner(db: Db, userId: number): Promise<number> {
  checkUserId(userId);
  const name = customerOwnerName(userId);
  const existing = await ownerByName(db, name);
  const ownerId = existing ? Number(existing.id) : await ensureOwner(db, name);
  if (!existing || !(await walletOf(db, ownerId))) await ensureWallet(db, ownerId);
  return ownerId;
}
