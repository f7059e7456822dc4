import type { CustomerPort } from '../../contract/customer.js';
import type { RelayPort } from '../../contract/relay.js';
import type { RateLimiter } from '../../kit/ratelimit/index.js';
import type { EdgeContext } from '../context.js';
import { accessPart } from './access.js';
import type { SyncCalls } from '../calls/service.js';
import { ledgerPart } from './ledger/index.js';
import { playgroundPart } from './playground.js';
import { tokenPart } from './tokens/service.js';
import { walletPart } from './wallet.js';

/**
 * The customer port as the edge serves it (src/contract/customer.ts): an account user's wallet, tokens and
 * whether its keys work at all, the ledger's usage, top-up codes and prices (the prices asked of the gateway
 * through `relay`), and the playground's chat (a call through `calls`, limited per user by `limiter`). The
 * account service holds it in process, or reaches it over the edge's internal routes.
 */
export function createCustomerPort(ctx: EdgeContext, relay: RelayPort, calls: Pick<SyncCalls, 'call'>, limiter: RateLimiter): CustomerPort {
  return { ...walletPart(ctx), ...accessPart(ctx), ...tokenPart(ctx), ...ledgerPart(ctx, relay), ...playgroundPart(ctx, calls, limiter) };
}
