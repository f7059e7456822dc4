import type { AccountContext } from '../context.js';
import type { UsersService } from '../users/service.js';
import type { EdgeAccess } from './edge.js';
import { createTokensService } from './tokens/service.js';
import { createUsageService } from './usage/service.js';
import { createTopupService } from './topup/service.js';
import { createPricingService } from './pricing/service.js';
import { createWalletService } from './wallet/service.js';
import { createPlaygroundService } from './playground/service.js';

/**
 * new-api's customer API on the account service (issue 30): keys, usage, top-up codes, prices, wallets and the playground,
 * all kept on the edge and reached through the customer port the holder carries (in process when the edge
 * runs here, over HTTP otherwise; EDGE_UNAVAILABLE without either).
 */
export function createCustomerServices(ctx: AccountContext, edge: EdgeAccess, users: UsersService) {
  const log = ctx.log.child({ module: 'customers' });
  return {
    tokens: createTokensService(edge),
    usage: createUsageService(edge, users),
    topup: createTopupService(edge, log),
    pricing: createPricingService(edge, users),
    wallet: createWalletService(edge, { users, log }),
    playground: createPlaygroundService(edge, users, ctx.config.edge.runs.maxRequestBytes),
  };
}

export type CustomerServices = ReturnType<typeof createCustomerServices>;
