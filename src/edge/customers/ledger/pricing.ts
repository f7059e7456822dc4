import { CustomerRefusal, type CustomerPort, type ModelPrice } from '../../../contract/customer.js';
import type { RelayPort, RelayPrices } from '../../../contract/relay.js';
import type { EdgeContext } from '../../context.js';
import { listModels } from '../../models/store.js';
import { checkUserId } from '../owners.js';

export type PricingMethods = Pick<CustomerPort, 'pricing' | 'models'>;

/** A model the relay has no price for is listed free: what a call of it costs when the relay serves unpriced models. */
const UNPRICED = { quota_type: 0, model_ratio: 0, model_price: 0, completion_ratio: 1 } as const;

/**
 * Prices (new-api's /api/pricing) and the models a user may call (/api/user/models): the edge's enabled
 * public models, priced by the gateway's ratio configuration (RelayPort.prices) under each model's gateway
 * name, in the model's channel group. A model not enabled on the edge is in neither. The model list may be
 * narrowed to one channel group (new-api's GetGroupEnabledModels).
 */
export function pricingPart(ctx: EdgeContext, relay: RelayPort): PricingMethods {
  return {
    async pricing() {
      const models = await listModels(ctx.db, true);
      if (models.length === 0) return { models: [], group_ratio: {} };
      const gatewayName = (m: (typeof models)[number]) => m.gateway_model ?? m.public_model_id;
      let prices: RelayPrices;
      try {
        prices = await relay.prices([...new Set(models.map(gatewayName))]);
      } catch (e) {
        ctx.log.warn({ err: { message: (e as Error).message } }, 'customers: the gateway relay did not answer the prices');
        throw new CustomerRefusal('unavailable', 'the prices are kept by the gateway, which did not answer');
      }
      const priced = models.map((m): ModelPrice => {
        const p = Object.hasOwn(prices.models, gatewayName(m)) ? prices.models[gatewayName(m)] : null;
        return { model_name: m.public_model_id, ...(p ?? UNPRICED), enable_groups: [m.group_name] };
      });
      // Every group's ratio the gateway has, and 1 for a model's group it has none for (what the relay charges then).
      const groups = Object.entries(prices.group_ratio);
      for (const m of models) if (!Object.hasOwn(prices.group_ratio, m.group_name)) groups.push([m.group_name, 1]);
      return { models: priced, group_ratio: Object.fromEntries(groups) };
    },

    async models(userId, group) {
      checkUserId(userId);
      const models = await listModels(ctx.db, true);
      return models.filter((m) => group === '' || m.group_name === group).map((m) => m.public_model_id);
    },
  };
}
