import type { OperationImpl } from '../../contract/types.js';
import type { CustomerServices } from './service.js';
import { tokenRoutes } from './tokens/routes.js';
import { usageRoutes } from './usage/routes.js';
import { topupRoutes } from './topup/routes.js';
import { pricingRoutes } from './pricing/routes.js';
import { walletRoutes } from './wallet/routes.js';
import { playgroundRoutes } from './playground/routes.js';

/** Every customer-API operation (AP01–AS17) and the playground (AP49). */
export function customerRoutes(s: CustomerServices): OperationImpl<any>[] {
  return [...tokenRoutes(s.tokens), ...usageRoutes(s.usage), ...topupRoutes(s.topup), ...pricingRoutes(s.pricing), ...walletRoutes(s.wallet), ...playgroundRoutes(s.playground)];
}
