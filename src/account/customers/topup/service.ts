import type { Logger } from 'pino';
import type { TopupCode } from '../../../contract/customer.js';
import { pageAnswer, pageOf, type PagingInput } from '../paging.js';
import type { EdgeAccess } from '../edge.js';

export interface CodeInput {
  name?: string;
  quota?: number;
  expired_time?: number;
}

const actor = (adminId: number) => `account:${adminId}`;

/**
 * A code's settings as a request sends them; what it leaves out is refused by the edge, which checks them as
 * new-api does (a name of 1–20 characters, a quota of at least 1, 1–100 codes, an expiry of 0 or ahead).
 */
function codeSettings(c: CodeInput) {
  return { name: c.name ?? '', quota: c.quota ?? 0, expired_time: c.expired_time ?? 0 };
}

/**
 * Top-up codes (new-api's redemptions): a customer redeems one (credited once by the edge, whatever the
 * concurrency) and lists their top-ups; admins create, list, change and delete codes. Code keys are shown
 * once, in the create answer, and never logged.
 */
export function createTopupService(edge: EdgeAccess, log: Logger) {
  return {
    /** POST /api/user/topup: the units credited. Unknown, used, disabled and expired codes answer alike. */
    redeem(userId: number, key: string): Promise<number> {
      return edge.run((port) => port.redeem(userId, key.trim()));
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
      const keys = await edge.run((port) => port.createCodes({ ...settings, count }, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
      log.info({ audit: 'redemption.create', admin_id: adminId, name: settings.name, count, quota: settings.quota }, 'top-up codes created');
      return keys;
    },

    /** PUT /api/redemption/: name, quota and expiry, or with `status_only` the status alone (1 enabled, 2 disabled). */
    update(adminId: number, input: CodeInput & { id: number; status?: number }, statusOnly: boolean): Promise<TopupCode> {
      // The edge takes 1 (enabled) or 2 (disabled) only.
      if (statusOnly) return edge.run((port) => port.setCodeStatus(input.id, input.status ?? 0, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
      return edge.run((port) => port.updateCode(input.id, codeSettings(input), actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
    },

    code(id: number): Promise<TopupCode> {
      return edge.run((port) => port.code(id), 'TOPUP_CODE_NOT_FOUND');
    },

    /** DELETE /api/redemption/invalid: how many used, disabled or expired codes were deleted. */
    async removeInvalid(adminId: number): Promise<number> {
      const deleted = await edge.run((port) => port.deleteInvalidCodes(actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
      log.info({ audit: 'redemption.delete_invalid', admin_id: adminId, count: deleted }, 'invalid top-up codes deleted');
      return deleted;
    },

    remove(adminId: number, id: number): Promise<void> {
      return edge.run((port) => port.deleteCode(id, actor(adminId)), 'TOPUP_CODE_NOT_FOUND');
    },
  };
}

export type TopupService = ReturnType<typeof createTopupService>;
