import crypto from 'node:crypto';
import { CustomerRefusal, customerOwnerName, type CustomerActor, type CustomerBalance, type CustomerPort } from '../../contract/customer.js';
import { isUniqueViolation, locksRows, transactionWithRetry } from '../../kit/db/index.js';
import { appendAudit } from '../audit/store.js';
import type { EdgeContext } from '../context.js';
import type { EdgeWalletTable } from '../db.js';
import type { Db } from '../keys/store.js';
import { credit, creditOf, insertCredit, setBalance, walletOf, walletsOf } from '../wallets/store.js';
import { checkUserId, customerOwnerId, ensureCustomerOwner } from './owners.js';

export type WalletMethods = Pick<CustomerPort, 'balance' | 'balances' | 'setQuota' | 'grant'>;

/** The largest balance an adjustment sets or a grant adds (new-api's token limit: 1e9 USD). */
const MAX_UNITS = 1_000_000_000 * 500_000;
/** Kinds of credit a grant's id may name by its prefix (`signup:…`, `import:…`); any other id is a plain credit. */
const GRANT_KINDS = new Set(['signup', 'import']);
const ZERO: CustomerBalance = { quota: 0, used_quota: 0, request_count: 0 };

function balanceOf(w: Pick<EdgeWalletTable, 'balance' | 'reserved'> & { used_quota: unknown; request_count: unknown }): CustomerBalance {
  return { quota: Number(w.balance) - Number(w.reserved), used_quota: Number(w.used_quota), request_count: Number(w.request_count) };
}

const units = (n: number) => Number.isSafeInteger(n) && n >= 0 && n <= MAX_UNITS;
const reasonOf = (reason: string) => String(reason ?? '').slice(0, 255);

function checkCreditId(creditId: string) {
  if (typeof creditId !== 'string' || creditId.length < 1 || creditId.length > 320) throw new CustomerRefusal('invalid', 'the credit id must be 1 to 320 characters');
}

/** The kind a grant is recorded as (edge_credits.kind), from its credit id's prefix. */
export function grantKindOf(creditId: string): string {
  const prefix = creditId.split(':', 1)[0]!;
  return GRANT_KINDS.has(prefix) ? prefix : 'credit';
}

/**
 * An account user's wallet: its balance in new-api's terms, an admin's adjustment (an absolute set, audited
 * with its reason as one movement), and grants made once per credit id (a starting balance, an import).
 * Every change is one transaction: the wallet, its edge_credits row and its edge_audit row.
 */
export function walletPart(ctx: EdgeContext): WalletMethods {
  const lockedWallet = async (trx: Db, ownerId: number) => {
    let q = trx.selectFrom('edge_wallets').selectAll().where('owner_id', '=', ownerId);
    if (locksRows(ctx.database.dialect)) q = q.forUpdate();
    return q.executeTakeFirstOrThrow();
  };

  const balance = async (userId: number, db: Db = ctx.db): Promise<CustomerBalance> => {
    const ownerId = await customerOwnerId(db, userId);
    const w = ownerId === undefined ? undefined : await walletOf(db, ownerId);
    return w ? balanceOf(w) : { ...ZERO };
  };

  return {
    balance: (userId) => balance(userId),

    async balances(userIds) {
      const ids = [...new Set(userIds)];
      ids.forEach(checkUserId);
      const answer = new Map<number, CustomerBalance>(ids.map((id) => [id, { ...ZERO }]));
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const owners = await ctx.db.selectFrom('edge_owners').select(['id', 'name']).where('name', 'in', chunk.map(customerOwnerName)).execute();
        const userOf = new Map(owners.map((o) => [Number(o.id), Number(o.name.slice(o.name.indexOf('-') + 1))]));
        for (const w of await walletsOf(ctx.db, [...userOf.keys()])) answer.set(userOf.get(Number(w.owner_id))!, balanceOf(w));
      }
      return answer;
    },

    async setQuota(userId, quota, by: CustomerActor, reason) {
      checkUserId(userId);
      if (!units(quota)) throw new CustomerRefusal('invalid', `the quota must be an integer from 0 to ${MAX_UNITS}`);
      return transactionWithRetry(ctx.db, async (trx) => {
        const ownerId = await ensureCustomerOwner(trx, userId);
        const before = await lockedWallet(trx, ownerId);
        const after = await setBalance(trx, ownerId, quota);
        if (!after) throw new CustomerRefusal('insufficient', `running calls hold ${Number(before.reserved)} units`);
        const answer = balanceOf(after);
        const amount = quota - Number(before.balance);
        await insertCredit(trx, { credit_id: `adjust:${crypto.randomUUID()}`, owner_id: ownerId, amount, wallet: JSON.stringify(answer), kind: 'adjust', reason: reasonOf(reason) });
        await appendAudit(trx, by, 'wallet.adjust', { owner: customerOwnerName(userId), from: Number(before.balance), to: quota, amount, reason: reasonOf(reason) });
        return answer;
      });
    },

    async grant(userId, amount, creditId, by: CustomerActor, reason) {
      checkUserId(userId);
      if (!units(amount)) throw new CustomerRefusal('invalid', `the amount must be an integer from 0 to ${MAX_UNITS}`);
      checkCreditId(creditId);
      const kind = grantKindOf(creditId);
      try {
        return await transactionWithRetry(ctx.db, async (trx) => {
          const ownerId = await ensureCustomerOwner(trx, userId);
          const answer = balanceOf(await credit(trx, ownerId, amount));
          // Last, in the same transaction: a second grant with this id fails here and adds nothing.
          await insertCredit(trx, { credit_id: creditId, owner_id: ownerId, amount, wallet: JSON.stringify(answer), kind, reason: reasonOf(reason) });
          await appendAudit(trx, by, 'wallet.grant', { owner: customerOwnerName(userId), amount, kind, credit_id: creditId, reason: reasonOf(reason) });
          return answer;
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        const first = await creditOf(ctx.db, creditId);
        if (!first) throw e;
        if (Number(first.owner_id) !== (await customerOwnerId(ctx.db, userId))) throw new CustomerRefusal('invalid', 'this credit id was used for another user');
        return balance(userId);
      }
    },
  };
}
