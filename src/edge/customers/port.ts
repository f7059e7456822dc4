import type { CustomerPort } from '../../contract/customer.js';
import type { RelayPort } from '../../contract/relay.js';
import type { EdgeContext } from '../context.js';
import { accessPart } from './access.js';
import { ledgerPart } from './ledger/index.js';
import { tokenPart } from './tokens/service.js';
import { walletPart } from './wallet.js';

/**
 * The customer port as the edge serves it (src/contract/customer.ts): an account user's wallet, tokens and
 * whether its keys work at all, and the ledger's usage, top-up codes and prices (the prices asked of the
 * gateway through `relay`). The account service holds it in process, or reaches it over the edge's internal
 * route.
 */
export function createCustomerPort(ctx: EdgeContext, relay: RelayPort): CustomerPort {
  return { ...walletPart(ctx), ...accessPart(ctx), ...tokenPart(ctx), ...ledgerPart(ctx, relay) };
}
