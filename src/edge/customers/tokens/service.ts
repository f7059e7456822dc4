import { CustomerRefusal, TOKEN_STATUS, customerOwnerName, type CustomerPort, type CustomerToken, type PageQuery } from '../../../contract/customer.js';
import { open, seal } from '../../../kit/crypto/aead.js';
import { transactionWithRetry } from '../../../kit/db/index.js';
import { appendAudit } from '../../audit/store.js';
import type { EdgeContext } from '../../context.js';
import { nowSeconds } from '../../db.js';
import { importedKeyId, isImportedKey, maskedKey, newCredential, parseCredential, secretHash, secretMatches } from '../../keys/credentials.js';
import { insertKey, revokeKey, type Db } from '../../keys/store.js';
import { tokenExpired } from '../../keys/token-limits.js';
import { customerOwnerId, ensureCustomerOwner } from '../owners.js';
import { tokenFields } from './settings.js';
import {
  countTokens,
  dropLatePendingKeys,
  findTokens,
  insertToken,
  markDeleted,
  setTokenStatus,
  takePendingKey,
  tokenOf,
  tokensOf,
  updateTokenFields,
  type TokenFilter,
  type TokenRow,
} from './store.js';

export type TokenMethods = Pick<CustomerPort, 'listTokens' | 'searchTokens' | 'token' | 'createToken' | 'updateToken' | 'setTokenStatus' | 'deleteTokens' | 'revealKeys'>;

/**
 * How long after its creation a token's key may still be shown once more (the dashboard's first /key call
 * after the create answer): 15 minutes. Until then the key is kept sealed with the edge key; afterwards (or
 * after that one showing) only its hash is kept, and a reveal is refused with key_already_shown.
 */
export const KEY_SHOWING_SECONDS = 15 * 60;
/** new-api's default MaxUserTokens. */
const MAX_TOKENS_PER_USER = 1000;
/** new-api's limit of keys one batch reveal answers; a batch delete takes as many as a user may have. */
const MAX_REVEAL_BATCH = 100;
const MAX_DELETE_BATCH = MAX_TOKENS_PER_USER;
const PAGE_SIZE_MAX = 100;

const sealedAad = (keyId: string) => `edge-token-key:${keyId}`;
const actorOf = (userId: number) => `account:${userId}`;

function notFound(): never {
  throw new CustomerRefusal('not_found', 'no such token');
}

/** new-api's status as reads report it: a disabled token stays 2; otherwise 3 once expired, 4 once a limited token has nothing left. */
export function statusOf(row: Pick<TokenRow, 'status' | 'expired_time' | 'unlimited_quota' | 'remain_quota'>, now = nowSeconds()): number {
  if (Number(row.status) === TOKEN_STATUS.disabled) return TOKEN_STATUS.disabled;
  if (tokenExpired(Number(row.expired_time), now)) return TOKEN_STATUS.expired;
  if (Number(row.unlimited_quota) !== 1 && Number(row.remain_quota) <= 0) return TOKEN_STATUS.exhausted;
  return TOKEN_STATUS.enabled;
}

function tokenView(row: TokenRow, userId: number): CustomerToken {
  return {
    id: Number(row.id),
    user_id: userId,
    key: row.key_hint,
    status: statusOf(row),
    name: row.name,
    expired_time: Number(row.expired_time),
    remain_quota: Number(row.remain_quota),
    unlimited_quota: Number(row.unlimited_quota) === 1,
    model_limits_enabled: Number(row.model_limits_enabled) === 1,
    model_limits: row.model_limits,
    allow_ips: row.allow_ips,
    group: row.group_name,
    created_time: Number(row.created_time),
    accessed_time: Number(row.accessed_time),
    used_quota: Number(row.used_quota),
  };
}

/** A page as new-api reads `p` and `page_size`: from 1, at most 100 a page. */
function pageOf(p: PageQuery) {
  const page = Number.isSafeInteger(p?.page) && p.page >= 1 ? p.page : 1;
  const size = Number.isSafeInteger(p?.size) && p.size >= 1 ? Math.min(p.size, PAGE_SIZE_MAX) : 10;
  return { offset: (page - 1) * size, limit: size };
}

function idsOf(ids: number[], max: number): number[] {
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > max || !ids.every((id) => Number.isSafeInteger(id) && id >= 1)) {
    throw new CustomerRefusal('invalid', `ids must be 1 to ${max} token ids`);
  }
  return [...new Set(ids)];
}

/** What a key search looks for: a full key (its key id, then its hash), the masked key, or a part of it. */
function keyFilter(key: string): { filter: TokenFilter; fullKey?: string } {
  const k = key.trim();
  const keyId = parseCredential(k)?.keyId ?? (isImportedKey(k) ? importedKeyId(k) : undefined);
  if (keyId !== undefined) return { filter: { keyId }, fullKey: k };
  return { filter: k.includes('*') ? { hint: k } : { hintPart: k } };
}

/**
 * An account user's API tokens (new-api's tokens): each is a developer key (edge_keys) and its settings
 * (edge_tokens), owned by the user's edge owner. Every method finds tokens by owner and id together: another
 * user's token id is not_found and left untouched.
 */
export function tokenPart(ctx: EdgeContext): TokenMethods {
  const db = ctx.db;
  /** The user's live token, or not_found. */
  const owned = async (trx: Db, userId: number, id: number, lock = false) => {
    if (!Number.isSafeInteger(id) || id < 1) notFound();
    const ownerId = await customerOwnerId(trx, userId);
    const row = ownerId === undefined ? undefined : await tokenOf(trx, ownerId, id, lock);
    return row ?? notFound();
  };
  const find = async (userId: number, filter: TokenFilter, page: PageQuery) => {
    const ownerId = await customerOwnerId(db, userId);
    if (ownerId === undefined) return { rows: [], total: 0 };
    const { offset, limit } = pageOf(page);
    return findTokens(db, ownerId, filter, offset, limit);
  };

  return {
    async listTokens(userId, page) {
      const { rows, total } = await find(userId, {}, page);
      return { items: rows.map((r) => tokenView(r, userId)), total };
    },

    async searchTokens(userId, keyword, key, page) {
      const filter: TokenFilter = {};
      if (typeof keyword === 'string' && keyword.trim() !== '') filter.name = keyword.trim();
      let fullKey: string | undefined;
      if (typeof key === 'string' && key.trim() !== '') {
        const k = keyFilter(key);
        Object.assign(filter, k.filter);
        fullKey = k.fullKey;
      }
      let { rows, total } = await find(userId, filter, page);
      if (fullKey !== undefined && rows.length) {
        // The key id alone is not the key: a wrong secret with a right key id finds nothing.
        const stored = await db.selectFrom('edge_keys').select('secret_hash').where('key_id', '=', rows[0]!.key_id).executeTakeFirst();
        const secret = parseCredential(fullKey)?.secret ?? fullKey;
        if (!secretMatches(secret, stored?.secret_hash ?? null)) {
          rows = [];
          total = 0;
        }
      }
      return { items: rows.map((r) => tokenView(r, userId)), total };
    },

    async token(userId, id) {
      return tokenView(await owned(db, userId, id), userId);
    },

    async createToken(userId, settings) {
      const fields = tokenFields(settings, true);
      const now = nowSeconds();
      const created = await transactionWithRetry(db, async (trx) => {
        const ownerId = await ensureCustomerOwner(trx, userId);
        if ((await countTokens(trx, ownerId)) >= MAX_TOKENS_PER_USER) throw new CustomerRefusal('invalid', `a user may have at most ${MAX_TOKENS_PER_USER} tokens`);
        const c = newCredential();
        await insertKey(trx, { key_id: c.keyId, owner_id: ownerId, secret_hash: secretHash(c.secret).toString('hex') });
        const id = await insertToken(trx, {
          ...fields,
          key_id: c.keyId,
          owner_id: ownerId,
          key_hint: maskedKey(c.token),
          status: TOKEN_STATUS.enabled,
          created_time: now,
          pending_key: seal(ctx.secretKey, c.token, sealedAad(c.keyId)),
          pending_until: now + KEY_SHOWING_SECONDS,
        });
        await appendAudit(trx, actorOf(userId), 'token.create', { owner: customerOwnerName(userId), token_id: id, key_id: c.keyId });
        return { ownerId, row: (await tokenOf(trx, ownerId, id))!, key: c.token };
      });
      await dropLatePendingKeys(db, created.ownerId, now);
      return { token: tokenView(created.row, userId), key: created.key };
    },

    async updateToken(userId, id, settings) {
      const fields = tokenFields(settings, false);
      const row = await db.transaction().execute(async (trx) => {
        const before = await owned(trx, userId, id, true);
        await updateTokenFields(trx, Number(before.owner_id), id, fields);
        return (await tokenOf(trx, Number(before.owner_id), id))!;
      });
      return tokenView(row, userId);
    },

    async setTokenStatus(userId, id, status) {
      if (status !== TOKEN_STATUS.enabled && status !== TOKEN_STATUS.disabled) throw new CustomerRefusal('invalid', 'status must be 1 (enabled) or 2 (disabled)');
      const row = await db.transaction().execute(async (trx) => {
        const before = await owned(trx, userId, id, true);
        if (status === TOKEN_STATUS.enabled) {
          if (tokenExpired(Number(before.expired_time))) throw new CustomerRefusal('invalid', 'the token has expired: extend its expired_time first');
          if (Number(before.unlimited_quota) !== 1 && Number(before.remain_quota) <= 0) throw new CustomerRefusal('invalid', 'the token has no quota left: raise its remain_quota first');
        }
        await setTokenStatus(trx, Number(before.owner_id), id, status);
        return (await tokenOf(trx, Number(before.owner_id), id))!;
      });
      return tokenView(row, userId);
    },

    async deleteTokens(userId, ids) {
      const wanted = idsOf(ids, MAX_DELETE_BATCH);
      const ownerId = await customerOwnerId(db, userId);
      if (ownerId === undefined) return 0;
      return db.transaction().execute(async (trx) => {
        const rows = await tokensOf(trx, ownerId, wanted, true);
        if (rows.length === 0) return 0;
        await markDeleted(trx, ownerId, rows.map((r) => Number(r.id)), nowSeconds());
        for (const r of rows) await revokeKey(trx, r.key_id);
        await appendAudit(trx, actorOf(userId), 'token.delete', { owner: customerOwnerName(userId), token_ids: rows.map((r) => Number(r.id)) });
        return rows.length;
      });
    },

    async revealKeys(userId, ids) {
      const wanted = idsOf(ids, MAX_REVEAL_BATCH);
      const ownerId = await customerOwnerId(db, userId);
      if (ownerId === undefined) notFound();
      const now = nowSeconds();
      await dropLatePendingKeys(db, ownerId, now);
      return db.transaction().execute(async (trx) => {
        const rows = await tokensOf(trx, ownerId, wanted, true);
        if (rows.length < wanted.length) notFound();
        const shown = new Map<number, string>();
        for (const r of rows) {
          if (r.pending_key === null || r.pending_until === null || Number(r.pending_until) < now) throw new CustomerRefusal('key_already_shown', `the key of token ${r.id} was already shown`);
          shown.set(Number(r.id), openKey(r));
          // One showing, whoever asks at once: a concurrent reveal finds the key taken and is refused.
          if (!(await takePendingKey(trx, Number(r.id)))) throw new CustomerRefusal('key_already_shown', `the key of token ${r.id} was already shown`);
        }
        return shown;
      });
    },
  };

  function openKey(r: TokenRow): string {
    try {
      return open(ctx.secretKey, r.pending_key!, sealedAad(r.key_id));
    } catch {
      // Sealed with another edge key (EDGE_SECRET_KEY changed since): it cannot be shown any more.
      ctx.log.warn({ tokenId: Number(r.id) }, 'edge: a pending token key could not be opened with the edge key');
      throw new CustomerRefusal('key_already_shown', `the key of token ${r.id} can no longer be shown`);
    }
  }
}
