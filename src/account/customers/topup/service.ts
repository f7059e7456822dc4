import type { Logger } from 'pino';
import { AppError } from '../../../kit/http/errors.js';
import { CODE_STATUS, type TopupCode } from '../../../contract/customer.js';
import { pageAnswer, pageOf, type PagingInput } from '../paging.js';
import { MAX_QUOTA } from '../tokens/service.js';
import type { EdgeAccess } from '../edge.js';

/** new-api's limits on a batch of codes (AddRedemption): a name of 1–20 characters, 1–100 codes. */
export const CODE_NAME_MAX = 20;
export const CODE_COUNT_MAX = 100;
/** Longer than any code the edge makes: refused before it is looked up. */
const CODE_KEY_MAX = 128;

export interface CodeInput {
  name?: string;
  quota?: number;
  expired_time?: number;
}

const invalid = (detail: string) => new AppError('CUSTOMER_INVALID', { params: { detail } });
const actor = (adminId: number) => `account:${adminId}`;

function codeSettings(c: CodeInput) {
  const name = (c.name ?? '').trim();
  const length = [...name].length;
  if (length < 1 || length > CODE_NAME_MAX) throw invalid(`name must be 1 to ${CODE_NAME_MAX} characters`);
  const quota = c.quota ?? 0;
  if (quota < 1 || quota > MAX_QUOTA) throw invalid(`quota must be 1 to ${MAX_QUOTA} units`);
  const expired = c.expired_time ?? 0;
  // new-api's validateExpiredTime: 0 (never) or a time still ahead.
  if (expired !== 0 && expired < Math.floor(Date.now() / 1000)) throw invalid('expired_time must be 0 (never) or a time in the future');
  return { name, quota, expired_time: expired };
}

/**
 * Top-up codes (new-api's redemptions): a customer redeems one (credited once by the edge, whatever the
 * concurrency) and lists their top-ups; admins create, list, change and delete codes. Code keys are shown
 * once, in the create answer, and never logged.
 */
export function createTopupService(edge: EdgeAccess, log: Logger) {
  return {
    /** POST /api/user/topup: the units credited. Unknown, used, disabled and expired codes answer alike. */
    async redeem(userId: number, key: string): Promise<number> {
      const code = key.trim();
      if (!code) throw invalid('key is required');
      if (code.length > CODE_KEY_MAX) throw new AppError('TOPUP_CODE_INVALID');
      return edge.run((port) => port.redeem(userId, code));
    },

    async topups(userId: number, q: PagingInput) {
      const page = pageOf(q);
      return pageAnswer(page, await edge.run((port) => port.topups(userId, page)));
    },

    async codes(q: PagingInput & { keyword?: string }) {
      const page = pageOf(q);
      return pageAnswer(page, await edge.run((port) => port.listCodes((q.keyword ?? '').trim(), page), 'TOPUP_CODE_NOT_FOUND'));
    },

    /** The new codes' keys, shown in this answer only. */
    async create(adminId: number, input: CodeInput & { count?: number }): Promise<string[]> {
      const settings = codeSettings(input);
      const count = input.count ?? 0;
      if (count < 1 || count > CODE_COUNT_MAX) throw invalid(`count must be 1 to ${CODE_COUNT_MAX}`);
      const keys = await edge.run((port) => port.createCodes({ ...settings, count }, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
      log.info({ audit: 'redemption.create', admin_id: adminId, name: settings.name, count, quota: settings.quota }, 'top-up codes created');
      return keys;
    },

    /** PUT /api/redemption/: name, quota and expiry, or with `status_only` the status alone (1 enabled, 2 disabled). */
    update(adminId: number, input: CodeInput & { id: number; status?: number }, statusOnly: boolean): Promise<TopupCode> {
      if (statusOnly) {
        const status = input.status;
        if (status !== CODE_STATUS.enabled && status !== CODE_STATUS.disabled) throw invalid('status must be 1 (enabled) or 2 (disabled)');
        return edge.run((port) => port.setCodeStatus(input.id, status, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
      }
      const settings = codeSettings(input);
      return edge.run((port) => port.updateCode(input.id, settings, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
    },

    remove(adminId: number, id: number): Promise<void> {
      return edge.run((port) => port.deleteCode(id, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
    },
  };
}

export type TopupService = ReturnType<typeof createTopupService>;
