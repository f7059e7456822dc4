import type { ModelPrice } from '../../../contract/customer.js';
import { AppError } from '../../../kit/http/errors.js';
import type { EdgeAccess } from '../edge.js';

/** The group of an anonymous visitor of the pricing page (new-api's default group). */
export const DEFAULT_GROUP = 'default';

/** What prices need of the account's users: the caller's group. */
export interface UserGroupOf {
  groupOf(userId: number): Promise<string | null>;
}

/** A price row with the fields new-api's pricing page reads that the edge does not keep. */
const priceView = (m: ModelPrice) => ({ ...m, owner_by: '', supported_endpoint_types: [] as string[] });

/**
 * Prices and models (new-api's pricing and user-model controllers): every enabled public model of the edge,
 * with the ratio of the caller's group. A user belongs to one group here (no selectable groups).
 */
export function createPricingService(edge: EdgeAccess, users: UserGroupOf) {
  async function groupOf(userId: number | undefined): Promise<string> {
    if (userId === undefined) return DEFAULT_GROUP;
    return (await users.groupOf(userId)) || DEFAULT_GROUP;
  }

  return {
    /** GET /api/pricing: new-api's whole answer (its fields sit beside `data`, not in it). */
    async pricing(userId: number | undefined) {
      const [group, prices] = await Promise.all([groupOf(userId), edge.run((port) => port.pricing())]);
      return {
        success: true as const,
        message: '',
        data: prices.models.map(priceView),
        vendors: [],
        group_ratio: { [group]: prices.group_ratio[group] ?? 1 },
        usable_group: { [group]: group },
        supported_endpoint: {},
        auto_groups: [],
      };
    },

    /**
     * GET /api/user/models: the model ids the caller may call, or with `group` those of that group (new-api's
     * GetUserModels), which must be the caller's own: the only group a user may use here.
     */
    async models(userId: number, group = ''): Promise<string[]> {
      if (group !== '' && group !== (await groupOf(userId))) throw new AppError('MODEL_GROUP_DENIED', { params: { group } });
      return edge.run((port) => port.models(userId, group));
    },

    /** GET /api/user/self/groups: the caller's group with its ratio and description. */
    async groups(userId: number) {
      const [group, prices] = await Promise.all([groupOf(userId), edge.run((port) => port.pricing())]);
      return { [group]: { ratio: prices.group_ratio[group] ?? 1, desc: group } };
    },
  };
}

export type PricingService = ReturnType<typeof createPricingService>;
