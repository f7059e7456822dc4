import crypto from 'node:crypto';
import { CODE_STATUS, CustomerRefusal, customerOwnerName, type CustomerActor, type CustomerPort, type Topup, type TopupCode } from '../../../contract/customer.js';
import { transactionWithRetry } from '../../../kit/db/index.js';
import { appendAudit } from '../../audit/store.js';
import type { EdgeContext } from '../../context.js';
import { nowSeconds } from '../../db.js';
import { credit, insertCredit } from '../../wallets/store.js';
import { checkUserId, customerOwnerId, ensureCustomerOwner } from '../owners.js';
import { check, MAX_UNITS, pageOf, quotaText, UNITS_PER_USD, userIdOfOwner } from './common.js';
import { claimCode, codeByHash, codeById, creditsOfKinds, findCodes, insertCode, setCodeStatus, setRedeemedBy, softDeleteCode, softDeleteInvalidCodes, updateCode, type CodeRow } from './code-store.js';

export type CodeMethods = Pick<CustomerPort, 'createCodes' | 'listCodes' | 'code' | 'updateCode' | 'setCodeStatus' | 'deleteCode' | 'deleteInvalidCodes' | 'redeem' | 'topups'>;

/** new-api's limits on a batch of codes (AddRedemption): a name of 1–20 characters, 1–100 codes. */
const NAME_MAX = 20;
const COUNT_MAX = 100;
/** Longer than any code made here or imported from new-api (its column is char(32)): never looked up. */
const KEY_MAX = 128;
const REDEMPTION_PREFIX = 'redemption:';

/** A new code: 32 hex characters, as new-api's (a UUID without its dashes), from 128 random bits. */
const newKey = () => crypto.randomBytes(16).toString('hex');
export const codeHash = (key: string) => crypto.createHash('sha256').update(key, 'utf8').digest('hex');
/** The code as every list shows it: its first and last 4 characters around asterisks. */
const hintOf = (key: string) => `${key.slice(0, 4)}**********${key.slice(-4)}`;

const refused = () => new CustomerRefusal('code_invalid', 'invalid or already used top-up code');
const notFound = () => new CustomerRefusal('not_found', 'no such top-up code');

function checkSettings(c: { name: string; quota: number; expired_time: number }, now: number) {
  const length = typeof c?.name === 'string' && c.name.trim() ? [...c.name].length : 0;
  check(length >= 1 && length <= NAME_MAX, `the name must be 1 to ${NAME_MAX} characters`);
  check(Number.isSafeInteger(c.quota) && c.quota >= 1 && c.quota <= MAX_UNITS, `the quota must be an integer from 1 to ${MAX_UNITS}`);
  // new-api's validateExpiredTime: 0 (never) or a time not yet past.
  check(Number.isSafeInteger(c.expired_time) && (c.expired_time === 0 || c.expired_time >= now), 'expired_time must be 0 (never) or a time in the future');
}

function checkActor(by: CustomerActor) {
  check(typeof by === 'string' && by.length >= 1 && by.length <= 80, 'the actor must be 1 to 80 characters');
}

function checkId(id: number) {
  if (!Number.isSafeInteger(id) || id < 1) throw notFound();
}

const codeView = (r: CodeRow): TopupCode => ({
  id: Number(r.id),
  name: r.name,
  key: r.key_hint,
  status: Number(r.status),
  quota: Number(r.quota),
  created_time: Number(r.created_time),
  redeemed_time: Number(r.redeemed_time),
  used_user_id: userIdOfOwner(r.used_owner),
  expired_time: Number(r.expired_time),
});

/** A top-up row of a credit: a redeemed code (by the code's id), or an import (by a number derived from its credit id). */
function topupView(userId: number, c: { credit_id: string; amount: number; created_at: number }): Topup {
  const redeemed = c.credit_id.startsWith(REDEMPTION_PREFIX);
  const amount = Number(c.amount);
  const at = Number(c.created_at);
  return {
    id: redeemed ? Number(c.credit_id.slice(REDEMPTION_PREFIX.length)) : parseInt(codeHash(c.credit_id).slice(0, 12), 16),
    user_id: userId,
    amount,
    money: amount / UNITS_PER_USD,
    trade_no: c.credit_id,
    payment_method: redeemed ? 'redemption' : 'import',
    create_time: at,
    complete_time: at,
    status: 'success',
  };
}

/**
 * Top-up codes (new-api's redemptions): only each code's SHA-256 is kept, the keys are answered once, when
 * made. A redemption is one transaction: the code's conditional change to used, the wallet's credit (once
 * per code: its credit id), the credit row the usage log shows and the audit row. Every change of a code is
 * audited with its actor; no key is ever in an audit row, log or error.
 */
export function codePart(ctx: EdgeContext): CodeMethods {
  /** Runs `change` and, when it changed a code, the audit row of `operation`, in one transaction; answers whether it did. */
  const changed = (by: CustomerActor, operation: string, detail: Record<string, unknown>, change: (trx: typeof ctx.db) => Promise<boolean>) =>
    ctx.db.transaction().execute(async (trx) => {
      if (!(await change(trx))) return false;
      await appendAudit(trx, by, operation, detail);
      return true;
    });

  const viewOf = async (id: number) => {
    const row = await codeById(ctx.db, id);
    if (!row) throw notFound();
    return codeView(row);
  };

  return {
    async createCodes(c, by) {
      const now = nowSeconds();
      checkSettings(c, now);
      checkActor(by);
      check(Number.isSafeInteger(c.count) && c.count >= 1 && c.count <= COUNT_MAX, `the count must be 1 to ${COUNT_MAX}`);
      const keys = Array.from({ length: c.count }, newKey);
      await ctx.db.transaction().execute(async (trx) => {
        const ids: number[] = [];
        for (const key of keys) {
          ids.push(await insertCode(trx, { name: c.name, key_hash: codeHash(key), key_hint: hintOf(key), quota: c.quota, created_time: now, expired_time: c.expired_time, created_by: by }));
        }
        await appendAudit(trx, by, 'code.create', { name: c.name, quota: c.quota, count: c.count, expired_time: c.expired_time, ids });
      });
      return keys;
    },

    async listCodes(keyword, page) {
      const { limit, offset } = pageOf(page);
      const k = typeof keyword === 'string' ? keyword.trim() : '';
      const id = /^\d{1,15}$/.test(k) ? Number(k) : undefined;
      const { rows, total } = await findCodes(ctx.db, k ? { namePrefix: k, id } : {}, limit, offset);
      return { items: rows.map(codeView), total };
    },

    code(id) {
      checkId(id);
      return viewOf(id);
    },

    async updateCode(id, c, by) {
      checkId(id);
      checkSettings(c, nowSeconds());
      checkActor(by);
      const fields = { name: c.name, quota: c.quota, expired_time: c.expired_time };
      if (!(await changed(by, 'code.update', { id, ...fields }, (trx) => updateCode(trx, id, fields)))) throw notFound();
      return viewOf(id);
    },

    async setCodeStatus(id, status, by) {
      checkId(id);
      check(status === CODE_STATUS.enabled || status === CODE_STATUS.disabled, 'the status must be 1 (enabled) or 2 (disabled)');
      checkActor(by);
      // Conditional on not used: of a redemption and this change, whichever comes second finds the code as the first left it.
      if (!(await changed(by, 'code.status', { id, status }, (trx) => setCodeStatus(trx, id, status, CODE_STATUS.used)))) {
        if (!(await codeById(ctx.db, id))) throw notFound();
        throw new CustomerRefusal('invalid', 'a used code cannot be enabled or disabled');
      }
      return viewOf(id);
    },

    async deleteCode(id, by) {
      checkId(id);
      checkActor(by);
      if (!(await changed(by, 'code.delete', { id }, (trx) => softDeleteCode(trx, id, nowSeconds())))) throw notFound();
    },

    async deleteInvalidCodes(by) {
      checkActor(by);
      return ctx.db.transaction().execute(async (trx) => {
        const deleted = await softDeleteInvalidCodes(trx, nowSeconds(), CODE_STATUS);
        if (deleted > 0) await appendAudit(trx, by, 'code.delete_invalid', { count: deleted });
        return deleted;
      });
    },

    async redeem(userId, key) {
      checkUserId(userId);
      const code = typeof key === 'string' ? key.trim() : '';
      // Unknown, used, expired, disabled or malformed: one answer, so codes cannot be probed.
      if (!code || code.length > KEY_MAX) throw refused();
      const hash = codeHash(code);
      return transactionWithRetry(ctx.db, async (trx) => {
        const now = nowSeconds();
        if (!(await claimCode(trx, hash, now, CODE_STATUS))) throw refused();
        const c = await codeByHash(trx, hash);
        const id = Number(c.id);
        const amount = Number(c.quota);
        const ownerId = await ensureCustomerOwner(trx, userId);
        await setRedeemedBy(trx, id, ownerId);
        const w = await credit(trx, ownerId, amount);
        const wallet = { quota: Number(w.balance) - Number(w.reserved), used_quota: Number(w.used_quota), request_count: Number(w.request_count) };
        // The credit's reason is the usage log's top-up text (new-api's RecordLog of Redeem).
        const reason = `通过兑换码充值 ${quotaText(amount)}，兑换码ID ${id}`;
        await insertCredit(trx, { credit_id: `${REDEMPTION_PREFIX}${id}`, owner_id: ownerId, amount, wallet: JSON.stringify(wallet), kind: 'topup', reason });
        await appendAudit(trx, `account:${userId}`, 'code.redeem', { id, owner: customerOwnerName(userId), amount });
        return amount;
      });
    },

    async topups(userId, page) {
      const ownerId = await customerOwnerId(ctx.db, userId);
      if (ownerId === undefined) return { items: [], total: 0 };
      const { limit, offset } = pageOf(page);
      const { rows, total } = await creditsOfKinds(ctx.db, ownerId, ['topup', 'import'], limit, offset);
      return { items: rows.map((r) => topupView(userId, r)), total };
    },
  };
}
