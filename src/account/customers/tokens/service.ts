import type { Logger } from 'pino';
import { AppError } from '../../../kit/http/errors.js';
import type { CustomerToken, TokenSettings } from '../../../contract/customer.js';
import { pageAnswer, pageOf, type PagingInput } from '../paging.js';
import type { EdgeAccess } from '../edge.js';

/** A token's settings as a request sends them (new-api's field names); absent fields keep their value. */
export interface TokenInput {
  name?: string;
  expired_time?: number;
  remain_quota?: number;
  unlimited_quota?: boolean;
  model_limits_enabled?: boolean;
  model_limits?: string;
  /** new-api sends null for "any". */
  allow_ips?: string | null;
  group?: string;
}

/** What a new token has when the request leaves a field out: never expires, no spending room, any IP. */
const NEW_TOKEN: TokenSettings = {
  name: '',
  expired_time: -1,
  remain_quota: 0,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  group: '',
};

/**
 * The settings a request asks for over `base` (new-api's dashboard sends them all; a field left out keeps
 * its value). The edge checks them as new-api does, and more strictly where it enforces them.
 */
export function tokenSettings(input: TokenInput, base: TokenSettings): TokenSettings {
  return {
    name: input.name ?? base.name,
    expired_time: input.expired_time ?? base.expired_time,
    remain_quota: input.remain_quota ?? base.remain_quota,
    unlimited_quota: input.unlimited_quota ?? base.unlimited_quota,
    model_limits_enabled: input.model_limits_enabled ?? base.model_limits_enabled,
    model_limits: input.model_limits ?? base.model_limits,
    allow_ips: input.allow_ips === null ? '' : (input.allow_ips ?? base.allow_ips),
    group: input.group ?? base.group,
  };
}

/**
 * The caller's API tokens (new-api's token controller), kept on the edge. Every call names the owner by the
 * authenticated user's id: the edge answers another user's token as not found, so nothing of it is read or
 * changed. Keys are shown once: in the create answer, or on the first reveal after it.
 */
export function createTokensService(edge: EdgeAccess) {
  return {
    async list(userId: number, q: PagingInput) {
      const page = pageOf(q);
      return pageAnswer(page, await edge.run((port) => port.listTokens(userId, page)));
    },

    async search(userId: number, q: PagingInput & { keyword?: string; token?: string }) {
      const page = pageOf(q);
      return pageAnswer(page, await edge.run((port) => port.searchTokens(userId, (q.keyword ?? '').trim(), (q.token ?? '').trim(), page)));
    },

    get(userId: number, id: number): Promise<CustomerToken> {
      return edge.run((port) => port.token(userId, id));
    },

    /** The new token with its full key in `key`: the one answer that carries it (beyond new-api, which answers no data). */
    async create(userId: number, input: TokenInput) {
      const settings = tokenSettings(input, NEW_TOKEN);
      const created = await edge.run((port) => port.createToken(userId, settings));
      return { ...created.token, key: created.key };
    },

    /** PUT /api/token/: every setting, or with `status_only` the status alone (1 enabled, 2 disabled). */
    async update(userId: number, input: TokenInput & { id: number; status?: number }, statusOnly: boolean): Promise<CustomerToken> {
      // The edge takes 1 (enabled) or 2 (disabled) only, and refuses to enable an expired or exhausted token.
      if (statusOnly) return edge.run((port) => port.setTokenStatus(userId, input.id, input.status ?? 0));
      return edge.run(async (port) => {
        const current = await port.token(userId, input.id);
        return port.updateToken(userId, input.id, tokenSettings(input, current));
      });
    },

    async remove(userId: number, id: number) {
      const deleted = await edge.run((port) => port.deleteTokens(userId, [id]));
      if (deleted === 0) throw new AppError('TOKEN_NOT_FOUND');
    },

    /** How many of the caller's tokens among `ids` were deleted (another user's ids are left alone and not counted). */
    removeMany(userId: number, ids: number[]): Promise<number> {
      return edge.run((port) => port.deleteTokens(userId, ids));
    },

    /**
     * Deletes every token of the user (a deleted user's keys stop working); 0 when this service has no edge.
     * Reads from the first page each time: the deleted ones are gone from it.
     */
    async removeAll(userId: number): Promise<number> {
      if (!edge.port) return 0;
      let removed = 0;
      for (;;) {
        const page = await edge.run((port) => port.listTokens(userId, { page: 1, size: 100 }));
        if (page.items.length === 0) return removed;
        const deleted = await edge.run((port) => port.deleteTokens(userId, page.items.map((t) => t.id)));
        if (deleted === 0) return removed;
        removed += deleted;
      }
    },

    async revealKey(userId: number, id: number) {
      const keys = await edge.run((port) => port.revealKeys(userId, [id]));
      const key = keys.get(id);
      if (!key) throw new AppError('TOKEN_NOT_FOUND');
      return { key };
    },

    async revealKeys(userId: number, ids: number[]) {
      const keys = await edge.run((port) => port.revealKeys(userId, ids));
      return { keys: Object.fromEntries([...keys].map(([id, key]) => [String(id), key])) };
    },
  };
}

export type TokensService = ReturnType<typeof createTokensService>;

/**
 * Turns every API key of a user off or on at the edge (the users service calls it when it disables, enables
 * or deletes a user). Without an edge for this service (run alone, no ACCOUNT_EDGE_URL) there is no key it
 * could reach, and it only warns; an edge that is configured and fails is EDGE_UNAVAILABLE.
 */
export function createKeySwitch(edge: EdgeAccess, log: Logger) {
  return async (userId: number, enabled: boolean, by: string): Promise<void> => {
    if (!edge.port) {
      log.warn({ user_id: userId, enabled }, "the user's API keys were not switched: the edge is not reachable from this service");
      return;
    }
    await edge.run((port) => port.setUserEnabled(userId, enabled, by));
  };
}
